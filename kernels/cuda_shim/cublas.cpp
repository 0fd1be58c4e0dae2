// The cuBLAS calls of the CUDA forward pass (model/cuda/cublas_gemm.cpp):
// a handle bound to a stream, and cublasGemmEx in fp32 as a column-major
// OpenBLAS sgemm that runs on the handle's stream, in its order.
#include <cublas_v2.h>

#include <cblas.h>

#include <algorithm>
#include <string>

#include "kernels/cuda_shim/detail.hpp"
#include "kernels/cuda_shim/shim.hpp"

struct cublasContext {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

namespace {

namespace shim = kvactor::cuda_shim;

// The host-function rule and the sticky error apply to cuBLAS too.
cublasStatus_t enter(const char* call, cublasHandle_t handle, bool needs_handle = true) {
  if (shim::enter(call) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (needs_handle && handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return CUBLAS_STATUS_SUCCESS;
}

bool on_device(const void* p, const char* call, const char* what) {
  if (shim::kind_of(p) == shim::pointer_kind::device) return true;
  shim::violation(std::string(call) + ": " + what + " is not device memory (" + kvactor::cuda_shim::detail::describe(p) +
                  ")");
  return false;
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (const cublasStatus_t s = enter("cublasCreate", nullptr, false); s != CUBLAS_STATUS_SUCCESS) return s;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (const cublasStatus_t s = enter("cublasDestroy", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (const cublasStatus_t s = enter("cublasSetStream", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  if (const cublasStatus_t s = enter("cublasSetWorkspace", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (bytes > 0 && !on_device(workspace, "cublasSetWorkspace", "the workspace")) return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (const cublasStatus_t s = enter("cublasSetMathMode", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  // NOTE: fp32 products only; a mode that allows TF32 or lower would change numerics the shim does not model.
  return mode == CUBLAS_DEFAULT_MATH || mode == CUBLAS_PEDANTIC_MATH ? CUBLAS_STATUS_SUCCESS
                                                                     : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (const cublasStatus_t s = enter("cublasSetPointerMode", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (mode != CUBLAS_POINTER_MODE_HOST) return CUBLAS_STATUS_NOT_SUPPORTED;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t /*algo*/) {
  if (const cublasStatus_t s = enter("cublasGemmEx", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F ||
      (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_PEDANTIC))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto op_ok = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T; };
  if (!op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || k < 0 || alpha == nullptr || beta == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int rows_a = transa == CUBLAS_OP_N ? m : k, rows_b = transb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, rows_a) || ldb < std::max(1, rows_b) || ldc < std::max(1, m)) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (!on_device(A, "cublasGemmEx", "A") || !on_device(B, "cublasGemmEx", "B") || !on_device(C, "cublasGemmEx", "C"))
    return CUBLAS_STATUS_INVALID_VALUE;
  // NOTE: host pointer mode: alpha and beta are read now, as cuBLAS does.
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  const auto ta = transa == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  const auto tb = transb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  const auto* pa = static_cast<const float*>(A);
  const auto* pb = static_cast<const float*>(B);
  auto* pc = static_cast<float*>(C);
  const cudaError_t e = shim::enqueue(handle->stream, "cublasGemmEx", [=] {
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, a, pa, lda, pb, ldb, b, pc, ldc);
  });
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

const char* cublasGetStatusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  default: return "unknown error";
  }
}

} // extern "C"
