#pragma once
// KVACTOR_CUDA_CHECK(call): a failing CUDA call on the serving path is fatal
// (CUDA errors are sticky); the message names the call, the error and file:line.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace kvactor::kernels::detail {

[[noreturn]] inline void cuda_failed(cudaError_t e, const char* call, const char* file, int line) {
  std::fprintf(stderr, "kvactor: CUDA error %d (%s: %s) in %s at %s:%d\n", static_cast<int>(e),
               cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
  std::abort();
}

} // namespace kvactor::kernels::detail

#define KVACTOR_CUDA_CHECK(call)                                                   \
  do {                                                                             \
    const cudaError_t kvactor_cuda_error_ = (call);                                \
    if (kvactor_cuda_error_ != cudaSuccess) [[unlikely]]                           \
      ::kvactor::kernels::detail::cuda_failed(kvactor_cuda_error_, #call, __FILE__, __LINE__); \
  } while (false)
