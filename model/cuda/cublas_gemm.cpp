#include "model/cuda/cublas_gemm.hpp"

#include <cstdint>
#include <limits>

#include "model/cuda/cuda_check.hpp"
#include "model/forward/column_major_gemm.hpp"

namespace kvactor::model {

result<std::unique_ptr<cublas_gemm>> cublas_gemm::create(cudaStream_t stream, void* workspace,
                                                         std::size_t workspace_bytes) {
  cublasHandle_t handle = nullptr;
  KVACTOR_CUDA_TRY(cublasCreate(&handle));
  std::unique_ptr<cublas_gemm> g(new cublas_gemm(handle));
  KVACTOR_CUDA_TRY(cublasSetStream(handle, stream));
  KVACTOR_CUDA_TRY(cublasSetWorkspace(handle, workspace, workspace_bytes));
  KVACTOR_CUDA_TRY(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  KVACTOR_CUDA_TRY(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  return g;
}

cublas_gemm::~cublas_gemm() { (void)cublasDestroy(handle_); }

template <class T>
status cublas_gemm::gemm(const T* x, int64_t ldx, int64_t m, const T* w, int64_t n, int64_t k,
                         float* y, int64_t ldy, bool accumulate, cudaDataType inputs) const {
  constexpr int64_t int_max = std::numeric_limits<int>::max();
  if (m < 0 || n <= 0 || k <= 0 || ldx < k || ldy < n || m > int_max || n > int_max ||
      k > int_max || ldx > int_max || ldy > int_max)
    return error_in("forward pass (cuda)", "matrix product of unsupported size");
  if (m == 0) return {};
  const float alpha = 1.0f;
  const float beta = accumulate ? 1.0f : 0.0f;
  const column_major_gemm g = row_major_linear(x, ldx, m, w, n, k, y, ldy);
  KVACTOR_CUDA_TRY(cublasGemmEx(
    handle_, g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
    static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), &alpha, g.a, inputs,
    static_cast<int>(g.lda), g.b, inputs, static_cast<int>(g.ldb), &beta, g.c, CUDA_R_32F,
    static_cast<int>(g.ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return {};
}

status cublas_gemm::linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n,
                           int64_t k, float* y, int64_t ldy, bool accumulate) const {
  return gemm(x, ldx, m, w, n, k, y, ldy, accumulate, CUDA_R_32F);
}

status cublas_gemm::linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w,
                                int64_t n, int64_t k, float* y, int64_t ldy,
                                bool accumulate) const {
  return gemm(x, ldx, m, w, n, k, y, ldy, accumulate, CUDA_R_16BF);
}

} // namespace kvactor::model
