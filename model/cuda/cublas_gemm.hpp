#pragma once
// cublas_gemm: the cuBLAS handle of one forward pass, bound to its compute
// stream, with a workspace of its own (no allocation while steps run), and
// the one product the model needs: y = x W^T with W as the checkpoint
// stores it ([out, in], row-major).
//
// Numerics: fp32 inputs, fp32 output, CUBLAS_COMPUTE_32F (fp32 products and
// sums; never TF32 or another reduced-precision mode), as OpenBLAS's sgemm
// on the CPU; only the order of the sums differs. linear_bf16: bf16 x and W
// (CUDA_R_16BF), fp32 output and CUBLAS_COMPUTE_32F: each product of two
// bf16 values is exact in fp32, the sums fp32, as the CPU's bf16 kernels.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/result.hpp"

namespace kvactor::model {

class cublas_gemm {
public:
  // The handle of the current CUDA device; `workspace` (device memory)
  // must outlive it. Every product is enqueued on `stream`.
  static result<std::unique_ptr<cublas_gemm>> create(cudaStream_t stream, void* workspace,
                                                     std::size_t workspace_bytes);
  ~cublas_gemm();
  cublas_gemm(const cublas_gemm&) = delete;
  cublas_gemm& operator=(const cublas_gemm&) = delete;

  // y = x W^T, or y += x W^T with `accumulate`.
  // x: [m, k] rows ldx apart; w: [n, k] row-major; y: [m, n] rows ldy apart
  status linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n, int64_t k,
                float* y, int64_t ldy, bool accumulate) const;

  // The same with bf16 x and W (bit patterns) and an fp32 y.
  // x: [m, k] bf16 rows ldx apart; w: [n, k] bf16 row-major; y: [m, n] fp32 rows ldy apart
  status linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t n,
                     int64_t k, float* y, int64_t ldy, bool accumulate) const;

private:
  template <class T>
  status gemm(const T* x, int64_t ldx, int64_t m, const T* w, int64_t n, int64_t k, float* y,
              int64_t ldy, bool accumulate, cudaDataType inputs) const;

  explicit cublas_gemm(cublasHandle_t handle) : handle_(handle) {}

  cublasHandle_t handle_;
};

} // namespace kvactor::model
