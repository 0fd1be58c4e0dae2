#pragma once
// device_forward: the launches of one step of a forward pass whose weights,
// activations and step metadata all live in device memory — the CUDA
// forward pass's step — written against an interface of kernel launches.
// cuda_transformer runs it with CUDA launchers and cuBLAS (cuda/cuda_ops.hpp);
// tests/model/emulated_forward_test.cpp runs the very same sequence with the
// CUDA kernel sources through the CPU emulator, in CI, against the CPU
// forward pass. No CUDA header here.
//
//   embedding                                   hidden  [T, H]
//   per layer:
//     RMSNorm                                    normed  [T, H]
//     q|k|v = normed Wqkv^T (one fused product)   qkv     [T, q + 2 kv]
//     (Qwen3) RMSNorm per head of q and k, in place
//     RoPE on q and k, in place, one launch (angles from the upload), or
//     (bf16 cache) the same launch writing q|k|v     qkv_bf16 [T, q + 2 kv]
//     rotated and rounded to bf16
//     cache_write K, V (read in place from qkv)
//     paged_attention (query read in place)       attn    [T, q]
//     (bf16 cache: out in bf16, attn_bf16; widened into attn for fp32 matrices)
//     hidden += attn Wo^T
//     RMSNorm                                    normed
//     gate = normed Wg^T, up = normed Wu^T        gate, up [T, I]
//     gate = silu(gate) * up;  hidden += gate Wd^T
//   sampled rows: gather, RMSNorm                 last    [R, H]
//   logits = last Wlm^T                           logits  [R, vocab]
//
// Products by the plan's matrices: fp32 (x W^T in fp32), or bf16 — the
// input rows rounded to bf16 first (x_bf16; by the norm or SwiGLU that
// makes them, in the same launch), then bf16 x bf16 with fp32
// sums and an fp32 result: the CPU pass's bf16 activations. Everything else
// (norms, RoPE, SwiGLU, the residual) stays fp32.

#include <cstddef>
#include <cstdint>

#include "kernels/kv_cache.hpp"
#include "kernels/params.hpp"
#include "base/result.hpp"
#include "model/config.hpp"
#include "model/forward/batch.hpp"
#include "model/forward/batch_upload.hpp"
#include "model/forward/weight_plan.hpp"

namespace kvactor::model {

// Kernel launches in stream order over device pointers; each returns its
// launch error as a value.
class forward_ops {
public:
  virtual ~forward_ops() = default;

  // out[t] = table[ids[t]]; table: [vocab, hidden] of table_type (f32 or bf16);
  // ids: [T]; out: [T, hidden]
  virtual status embedding(const void* table, kernels::dtype table_type, const int32_t* ids,
                           int32_t num_tokens, int32_t hidden, float* out) = 0;
  // x: [T, heads_per_row, n] rows ldx apart; out rows ldo apart (may be x); weight: [n]
  virtual status rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                          int32_t heads_per_row, int32_t n, const float* weight, float eps) = 0;
  // rms_norm of whole rows (heads_per_row 1) rounded to bf16 (nearest even):
  // the bits of rms_norm then round_to_bf16, in one launch; out: [T, n] rows ldo apart
  virtual status rms_norm_bf16(const float* x, int64_t ldx, uint16_t* out, int64_t ldo,
                               int32_t num_tokens, int32_t n, const float* weight, float eps) = 0;
  // x: [T, num_heads, head_dim] rows ldx apart; cos, sin: [T, head_dim / 2]
  virtual status rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads,
                      int32_t head_dim, const float* cos, const float* sin) = 0;
  // RoPE on the first num_rotated heads of each row and every head rounded
  // to bf16 into out: the bits of rope then round_to_bf16, in one launch (x
  // unchanged); x: [T, num_heads, head_dim] rows ldx apart; out: rows ldo apart
  virtual status rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                           int32_t num_heads, int32_t head_dim, const float* cos,
                           const float* sin, uint16_t* out, int64_t ldo) = 0;
  // out = silu(gate) * up; [num] contiguous, out may be gate
  virtual status swiglu(const float* gate, const float* up, float* out, int64_t num) = 0;
  // swiglu rounded to bf16, as rms_norm_bf16; out: [num] contiguous
  virtual status swiglu_bf16(const float* gate, const float* up, uint16_t* out, int64_t num) = 0;
  // y[r] += bias; y: [num_rows, n] rows ldy apart; bias: [n]
  virtual status add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n,
                          const float* bias) = 0;
  // out[r] = x[rows[r]]; x: [T, n]; rows: [num_rows]; out: [num_rows, n]
  virtual status gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                             float* out) = 0;
  // y = x W^T (accumulate: y += x W^T); x: [m, k] rows ldx apart; w: [n, k];
  // y: [m, n] rows ldy apart
  virtual status linear(const float* x, int64_t ldx, int64_t m, const float* w, int64_t n,
                        int64_t k, float* y, int64_t ldy, bool accumulate) = 0;
  // y = x W^T (accumulate: y += x W^T) in bf16 with fp32 sums; x: [m, k] bf16
  // rows ldx apart; w: [n, k] bf16; y: [m, n] fp32 rows ldy apart
  virtual status linear_bf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w,
                             int64_t n, int64_t k, float* y, int64_t ldy, bool accumulate) = 0;
  // out = x rounded to bf16 (nearest even); x: [num_rows, n] rows ldx apart; out: rows ldo apart
  virtual status round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n,
                               uint16_t* out, int64_t ldo) = 0;
  // out = x widened (exact); [num] contiguous
  virtual status widen_bf16(const uint16_t* x, float* out, int64_t num) = 0;
  virtual status cache_write(const kernels::cache_write_params& p) = 0;
  virtual status paged_attention(const kernels::paged_attention_params& p) = 0;
};

// The device memory one step reads and writes.
struct forward_buffers {
  const std::byte* weights = nullptr; // [plan.total_bytes], laid out by the weight_plan
  const std::byte* upload = nullptr;  // the step's metadata, laid out by the batch_upload_layout
  float* hidden = nullptr;            // [T, hidden]
  float* normed = nullptr;            // [T, hidden]
  float* qkv = nullptr;               // [T, q_size + 2 kv_size]
  float* attn = nullptr;              // [T, q_size]
  float* gate = nullptr;              // [T, intermediate]
  float* up = nullptr;                // [T, intermediate]
  float* last = nullptr;              // [R, hidden]
  float* logits = nullptr;            // [R, vocab]
  // bf16 matrices only:
  uint16_t* x_bf16 = nullptr;    // [max(T, R), bf16_input_width]: a product's input rows
  // bf16 KV cache only:
  uint16_t* qkv_bf16 = nullptr;  // [T, q_size + 2 kv_size]
  uint16_t* attn_bf16 = nullptr; // [T, q_size]
};

// The widest input row of the model's products (hidden, q_size or
// intermediate): the width of forward_buffers::x_bf16.
int64_t bf16_input_width(const model_config& config);

// Enqueues every launch of step `b` (whose metadata is already at
// buffers.upload, laid out by `layout`); the logits of its sampled rows end
// up in buffers.logits. Stops at the first failing launch.
status enqueue_forward(forward_ops& ops, const model_config& config, const weight_plan& plan,
                       const kernels::kv_cache_view& cache, const forward_batch& b,
                       const batch_upload_layout& layout, const forward_buffers& buffers);

} // namespace kvactor::model
