#pragma once
// cuda_ops: device_forward's launches on a CUDA stream — the model's
// element-wise kernels (launch.hpp), the KV-cache kernels of kernels/
// (kernels/cuda/launch.hpp) and cuBLAS products (cublas_gemm) — each
// returning its launch error as a value, and counting its launches.

#include <cuda_runtime_api.h>

#include "model/cuda/cublas_gemm.hpp"
#include "model/forward/device_forward.hpp"

namespace kvactor::model {

class cuda_ops final : public forward_ops {
public:
  // `gemm` is bound to `stream` and outlives this; `split` is the device's
  // split-K attention scratch for `stream` (empty: decode never splits).
  cuda_ops(cudaStream_t stream, const cublas_gemm& gemm, kernels::attention_workspace split = {})
      : stream_(stream), gemm_(gemm), split_(split) {}

  status embedding(const void* table, kernels::dtype table_type, const int32_t* ids,
                   int32_t num_tokens, int32_t hidden, float* out) override;
  status rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                  int32_t heads_per_row, int32_t n, const float* weight, float eps) override;
  status rms_norm_bf16(const float* x, int64_t ldx, uint16_t* out, int64_t ldo, int32_t num_tokens,
                       int32_t n, const float* weight, float eps) override;
  status rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads, int32_t head_dim,
              const float* cos, const float* sin) override;
  status rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                   int32_t num_heads, int32_t head_dim, const float* cos, const float* sin,
                   uint16_t* out, int64_t ldo) override;
  status swiglu(const float* gate, const float* up, float* out, int64_t num) override;
  status swiglu_bf16(const float* gate, const float* up, uint16_t* out, int64_t num) override;
  status add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n,
                  const float* bias) override;
  status gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                     float* out) override;
  status linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n, int64_t k,
                float* y, int64_t ldy, bool accumulate) override;
  status linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t n,
                     int64_t k, float* y, int64_t ldy, bool accumulate) override;
  status round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n, uint16_t* out,
                       int64_t ldo) override;
  status widen_bf16(const uint16_t* x, float* out, int64_t num) override;
  status cache_write(const kernels::cache_write_params& p) override;
  status paged_attention(const kernels::paged_attention_params& p) override;

  // Kernels and cuBLAS products launched so far (a product counts one,
  // whatever cuBLAS launches for it; a split attention two).
  int64_t num_launches() const { return launches_; }

private:
  int64_t launches_ = 0;
  cudaStream_t stream_;
  const cublas_gemm& gemm_;
  kernels::attention_workspace split_;
};

} // namespace kvactor::model
