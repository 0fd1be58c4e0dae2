#pragma once
// KVACTOR_CUDA_OR_SKIP(): the first line of a CUDA test that also runs
// against the real runtime. Without a usable device the test skips, and
// fails when KVACTOR_REQUIRE_GPU=1 (GPU CI, tools/gpu-check); through the
// CUDA shim a device is always there.

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "kernels/device.hpp"

#define KVACTOR_CUDA_OR_SKIP()                                                                     \
  do {                                                                                             \
    if (auto cuda_device_ = ::kvactor::kernels::make_device("cuda"); !cuda_device_) {              \
      const char* required_ = std::getenv("KVACTOR_REQUIRE_GPU");                                  \
      if (required_ != nullptr && std::strcmp(required_, "1") == 0)                                \
        FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << cuda_device_.error().message;                    \
      GTEST_SKIP() << cuda_device_.error().message;                                                \
    }                                                                                              \
  } while (false)
