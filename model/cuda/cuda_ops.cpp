#include "model/cuda/cuda_ops.hpp"

#include "kernels/cuda/launch.hpp"
#include "model/cuda/cuda_check.hpp"
#include "model/cuda/launch.hpp"

namespace kvactor::model {

status cuda_ops::embedding(const void* table, kernels::dtype table_type, const int32_t* ids,
                           int32_t num_tokens, int32_t hidden, float* out) {
  ++launches_;
  KVACTOR_ASSERT(table_type == kernels::dtype::f32 || table_type == kernels::dtype::bf16,
                 "an f32 or bf16 table");
  KVACTOR_CUDA_TRY(cuda_launch::embedding(table, table_type == kernels::dtype::bf16, ids,
                                          num_tokens, hidden, out, stream_));
  return {};
}

status cuda_ops::rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                          int32_t heads_per_row, int32_t n, const float* weight, float eps) {
  ++launches_;
  KVACTOR_CUDA_TRY(
    cuda_launch::rms_norm(x, ldx, out, ldo, num_tokens, heads_per_row, n, weight, eps, stream_));
  return {};
}

status cuda_ops::rms_norm_bf16(const float* x, int64_t ldx, uint16_t* out, int64_t ldo,
                               int32_t num_tokens, int32_t n, const float* weight, float eps) {
  ++launches_;
  KVACTOR_CUDA_TRY(
    cuda_launch::rms_norm_bf16(x, ldx, out, ldo, num_tokens, n, weight, eps, stream_));
  return {};
}

status cuda_ops::rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads,
                      int32_t head_dim, const float* cos, const float* sin) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::rope(x, ldx, num_tokens, num_heads, head_dim, cos, sin, stream_));
  return {};
}

status cuda_ops::rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                           int32_t num_heads, int32_t head_dim, const float* cos,
                           const float* sin, uint16_t* out, int64_t ldo) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::rope_bf16(x, ldx, num_tokens, num_rotated, num_heads, head_dim,
                                          cos, sin, out, ldo, stream_));
  return {};
}

status cuda_ops::swiglu(const float* gate, const float* up, float* out, int64_t num) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::swiglu(gate, up, out, num, stream_));
  return {};
}

status cuda_ops::swiglu_bf16(const float* gate, const float* up, uint16_t* out, int64_t num) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::swiglu_bf16(gate, up, out, num, stream_));
  return {};
}

status cuda_ops::add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n,
                          const float* bias) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::add_bias(y, ldy, num_rows, n, bias, stream_));
  return {};
}

status cuda_ops::gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                             float* out) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::gather_rows(x, rows, num_rows, n, out, stream_));
  return {};
}

status cuda_ops::linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n,
                        int64_t k, float* y, int64_t ldy, bool accumulate) {
  ++launches_;
  return gemm_.linear(x, ldx, m, w, n, k, y, ldy, accumulate);
}

status cuda_ops::linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w,
                             int64_t n, int64_t k, float* y, int64_t ldy, bool accumulate) {
  ++launches_;
  return gemm_.linear_bf16(x, ldx, m, w, n, k, y, ldy, accumulate);
}

status cuda_ops::round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n,
                               uint16_t* out, int64_t ldo) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::round_to_bf16(x, ldx, num_rows, n, out, ldo, stream_));
  return {};
}

status cuda_ops::widen_bf16(const uint16_t* x, float* out, int64_t num) {
  ++launches_;
  KVACTOR_CUDA_TRY(cuda_launch::widen_bf16(x, out, num, stream_));
  return {};
}

status cuda_ops::cache_write(const kernels::cache_write_params& p) {
  ++launches_;
  KVACTOR_CUDA_TRY(kernels::cuda_launch::cache_write(p, stream_));
  return {};
}

status cuda_ops::paged_attention(const kernels::paged_attention_params& p) {
  kernels::paged_attention_params with_split = p;
  // decode at small batch and long context splits (kernels/cuda/attention_split.hpp)
  with_split.workspace = split_;
  launches_ += kernels::cuda_launch::attention_split_of(with_split).num_splits > 1 ? 2 : 1;
  KVACTOR_CUDA_TRY(kernels::cuda_launch::paged_attention(with_split, stream_));
  return {};
}

} // namespace kvactor::model
