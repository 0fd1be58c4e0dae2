#pragma once
// Launchers of the model's element-wise CUDA kernels (kernels/cuda/model_ops.cuh),
// compiled by nvcc into kvactor_model_cuda when CUDA is on. Each checks its
// arguments, launches on `stream` and returns the launch error.
// Called through cuda_ops (the CUDA forward pass, cuda_transformer).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/sample_rows.hpp"

namespace kvactor::model::cuda_launch {

// out: [T, hidden]; table: [vocab, hidden] of f32 (bf16_table false) or bf16 bits.
cudaError_t embedding(const void* table, bool bf16_table, const int32_t* ids, int32_t num_tokens,
                      int32_t hidden, float* out, cudaStream_t stream);
// x: [T, heads_per_row, n] rows ldx apart; out rows ldo apart; weight: [n]
cudaError_t rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                     int32_t heads_per_row, int32_t n, const float* weight, float eps,
                     cudaStream_t stream);
// rms_norm of whole rows rounded to bf16; out: [T, n] bf16 bits, rows ldo apart
cudaError_t rms_norm_bf16(const float* x, int64_t ldx, void* out, int64_t ldo, int32_t num_tokens,
                          int32_t n, const float* weight, float eps, cudaStream_t stream);
// x: [T, num_heads, head_dim] rows ldx apart; cos, sin: [T, head_dim / 2]
cudaError_t rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads, int32_t head_dim,
                 const float* cos, const float* sin, cudaStream_t stream);
// RoPE on the first num_rotated heads, every head rounded to bf16 into out
// (bf16 bits, rows ldo apart); x: [T, num_heads, head_dim] rows ldx apart
cudaError_t rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                      int32_t num_heads, int32_t head_dim, const float* cos, const float* sin,
                      void* out, int64_t ldo, cudaStream_t stream);
// gate, up, out: [num] contiguous
cudaError_t swiglu(const float* gate, const float* up, float* out, int64_t num,
                   cudaStream_t stream);
// swiglu rounded to bf16; out: [num] bf16 bits
cudaError_t swiglu_bf16(const float* gate, const float* up, void* out, int64_t num,
                        cudaStream_t stream);
// y: [num_rows, n] rows ldy apart; bias: [n]
cudaError_t add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n, const float* bias,
                     cudaStream_t stream);
// x: [T, n]; rows: [num_rows]; out: [num_rows, n]
cudaError_t gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                        float* out, cudaStream_t stream);

// x: [num_rows, n] fp32 rows ldx apart; out: [num_rows, n] bf16 bits, rows ldo apart
cudaError_t round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n, void* out,
                          int64_t ldo, cudaStream_t stream);
// x: [num] bf16 bits; out: [num] fp32
cudaError_t widen_bf16(const void* x, float* out, int64_t num, cudaStream_t stream);

// The sampler on num_rows rows of logits [num_rows, n] (changed in place by
// the rows' edits): logprobs (when any row asks), edits, tokens into out.
// rows: [num_rows]; edits: the rows' [edits_begin, edits_end); all device memory.
cudaError_t sample_rows(float* logits, int32_t n, int32_t num_rows,
                        const kernels::gpu::sample_row* rows, kernels::gpu::logit_edit* edits,
                        bool any_edits, bool any_logprobs, kernels::gpu::sampled_row* out,
                        cudaStream_t stream);

} // namespace kvactor::model::cuda_launch
