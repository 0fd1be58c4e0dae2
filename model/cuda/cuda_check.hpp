#pragma once
// CUDA and cuBLAS results as kvactor::status values, naming the call, the
// error and file:line. KVACTOR_CUDA_TRY(call) returns the error from the
// enclosing function, whose result type takes an `error`:
//
//   KVACTOR_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
//   KVACTOR_CUDA_TRY(cublasSetStream(handle, stream));
//
// NOTE: the device layer aborts on a failing call (kernels/cuda/check.hpp);
// the forward pass returns errors instead, so creating it on a broken
// device is an error message, not a crash.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "base/result.hpp"

namespace kvactor::model::cuda_check {

status check(cudaError_t e, const char* call, const char* file, int line);
status check(cublasStatus_t s, const char* call, const char* file, int line);

} // namespace kvactor::model::cuda_check

#define KVACTOR_CUDA_TRY(call)                                                                     \
  do {                                                                                             \
    if (const ::kvactor::status kvactor_try_ =                                                     \
          ::kvactor::model::cuda_check::check((call), #call, __FILE__, __LINE__);                  \
        !kvactor_try_)                                                                             \
      return kvactor_try_.error();                                                                 \
  } while (false)
