#pragma once
// CUDA kernels of the model's element-wise layers over fp32 activations:
// embedding gather, RMSNorm (rows or per head), RoPE (rotate-half), SwiGLU,
// row gather; and the bf16 conversions of the bf16 paths (rows rounded to
// bf16 for bf16 products and a bf16 KV cache, bf16 attention output
// widened). Written once: nvcc compiles them (model/cuda/model_kernels.cu),
// the emulator runs the same source in tests/model/emulated_model_ops_test.cpp
// against the CPU layers of model/forward/layers.hpp.
//
// The CUDA forward pass (model/cuda/cuda_transformer) launches them; the
// emulator also runs them in its launch order (tests/model/emulated_forward_test.cpp).

#include "kernels/cuda/compat.cuh"

namespace kvactor::kernels::gpu {

constexpr int model_ops_threads = 128;
constexpr int model_ops_warps = model_ops_threads / 32;

// out[t] = table[ids[t]]; TABLE is float or bf16 (widened exactly).
// grid: (num_tokens), block: (model_ops_threads).
// table: [vocab, hidden]; ids: [num_tokens]; out: [num_tokens, hidden]
template <class TABLE>
__global__ void embedding_kernel(const TABLE* table, const int32_t* ids, float* out,
                                 int32_t hidden) {
  const int64_t t = blockIdx.x;
  const TABLE* src = table + static_cast<int64_t>(ids[t]) * hidden;
  for (int i = static_cast<int>(threadIdx.x); i < hidden; i += model_ops_threads)
    out[t * hidden + i] = to_float(src[i]);
}

// Sum over the block; every thread gets it. scratch: [model_ops_warps].
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  KVACTOR_UNROLL
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (static_cast<int>(threadIdx.x) % 32 == 0) scratch[warp] = v;
  __syncthreads();
  float r = 0.0f;
  KVACTOR_UNROLL
  for (int w = 0; w < model_ops_warps; ++w) r += scratch[w];
  __syncthreads();  // scratch is reused by the next call
  return r;
}

// RMSNorm of vectors of n: vector v = token * heads_per_row + head sits at
// x + token * ldx + head * n (heads_per_row 1: whole rows; > 1: Qwen3's
// per-head q/k norm). out may be x.
// grid: (num_tokens * heads_per_row), block: (model_ops_threads).
// x: [T, heads_per_row, n] rows ldx apart; out: rows ldo apart; weight: [n]
// OUT float, or bf16: the fp32 result rounded (the product's input row, one
// launch instead of a norm and a rounding; the same bits).
template <class OUT>
__global__ void rms_norm_kernel(const float* x, int64_t ldx, OUT* out, int64_t ldo,
                                int32_t heads_per_row, int32_t n, const float* weight, float eps) {
  __shared__ float scratch[model_ops_warps];
  const int64_t token = blockIdx.x / heads_per_row;
  const int64_t head = blockIdx.x % heads_per_row;
  const float* xv = x + token * ldx + head * n;
  OUT* ov = out + token * ldo + head * n;
  float sum = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += model_ops_threads) sum += xv[i] * xv[i];
  const float inv = 1.0f / sqrtf(block_sum(sum, scratch) / static_cast<float>(n) + eps);
  for (int i = static_cast<int>(threadIdx.x); i < n; i += model_ops_threads)
    ov[i] = from_float<OUT>(weight[i] * (xv[i] * inv));
}

// Rotate-half RoPE in place on num_heads heads of each token row.
// grid: (num_tokens), block: (model_ops_threads).
// x: [T, num_heads, head_dim] rows ldx apart; cos, sin: [T, head_dim / 2]
__global__ void rope_kernel(float* x, int64_t ldx, int32_t num_heads, int32_t head_dim,
                            const float* cos_t, const float* sin_t) {
  const int64_t t = blockIdx.x;
  const int half = head_dim / 2;
  for (int j = static_cast<int>(threadIdx.x); j < num_heads * half; j += model_ops_threads) {
    const int h = j / half, i = j % half;
    float* v = x + t * ldx + static_cast<int64_t>(h) * head_dim;
    const float c = cos_t[t * half + i], s = sin_t[t * half + i];
    const float x1 = v[i], x2 = v[i + half];
    v[i] = x1 * c - x2 * s;
    v[i + half] = x2 * c + x1 * s;
  }
}

// RoPE on the first num_rotated heads of each row, and the row's num_heads
// heads rounded to bf16 into out: a bf16 KV cache's q|k|v, the bits of
// rope_kernel then round_to_bf16_kernel in one launch (x stays as it was).
// grid: (num_tokens), block: (model_ops_threads).
// x: [T, num_heads, head_dim] rows ldx apart; cos, sin: [T, head_dim / 2];
// out: [T, num_heads, head_dim] rows ldo apart
__global__ void rope_bf16_kernel(const float* x, int64_t ldx, int32_t num_rotated,
                                 int32_t num_heads, int32_t head_dim, const float* cos_t,
                                 const float* sin_t, bf16* out, int64_t ldo) {
  const int64_t t = blockIdx.x;
  const int half = head_dim / 2;
  for (int j = static_cast<int>(threadIdx.x); j < num_heads * half; j += model_ops_threads) {
    const int h = j / half, i = j % half;
    const float* v = x + t * ldx + static_cast<int64_t>(h) * head_dim;
    bf16* o = out + t * ldo + static_cast<int64_t>(h) * head_dim;
    const float x1 = v[i], x2 = v[i + half];
    if (h < num_rotated) {
      const float c = cos_t[t * half + i], s = sin_t[t * half + i];
      o[i] = from_float<bf16>(x1 * c - x2 * s);
      o[i + half] = from_float<bf16>(x2 * c + x1 * s);
    } else {
      o[i] = from_float<bf16>(x1);
      o[i + half] = from_float<bf16>(x2);
    }
  }
}

// out = silu(gate) * up over num elements; out may be gate.
// grid: (any), block: (model_ops_threads); grid-stride loop.
// OUT float, or bf16: rounded, as rms_norm_kernel's.
template <class OUT>
__global__ void swiglu_kernel(const float* gate, const float* up, OUT* out, int64_t num) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * model_ops_threads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * model_ops_threads + threadIdx.x; i < num;
       i += stride) {
    const float g = gate[i];
    out[i] = from_float<OUT>(g / (1.0f + expf(-g)) * up[i]);
  }
}

// y[r] += bias, row by row (Qwen2's q, k and v biases, after the product).
// grid: (num_rows), block: (model_ops_threads).
// y: [num_rows, n] rows ldy apart; bias: [n]
__global__ void add_bias_kernel(float* y, int64_t ldy, const float* bias, int32_t n) {
  const int64_t r = blockIdx.x;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += model_ops_threads)
    y[r * ldy + i] += bias[i];
}

// out[r] = x[rows[r]] (the rows that sample, before the final norm).
// grid: (num_rows), block: (model_ops_threads).
// x: [T, n]; rows: [num_rows]; out: [num_rows, n]
__global__ void gather_rows_kernel(const float* x, const int32_t* rows, float* out, int32_t n) {
  const int64_t r = blockIdx.x;
  const float* src = x + static_cast<int64_t>(rows[r]) * n;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += model_ops_threads)
    out[r * n + i] = src[i];
}

// out = x rounded to bf16 (nearest even, as model::f32_to_bf16), row by row.
// grid: (num_rows), block: (model_ops_threads).
// x: [num_rows, n] rows ldx apart; out: [num_rows, n] rows ldo apart
__global__ void round_to_bf16_kernel(const float* x, int64_t ldx, bf16* out, int64_t ldo,
                                     int32_t n) {
  const int64_t r = blockIdx.x;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += model_ops_threads)
    out[r * ldo + i] = from_float<bf16>(x[r * ldx + i]);
}

// out = x widened to fp32 (exact) over num elements.
// grid: (any), block: (model_ops_threads); grid-stride loop.
// x, out: [num] contiguous
__global__ void widen_bf16_kernel(const bf16* x, float* out, int64_t num) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * model_ops_threads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * model_ops_threads + threadIdx.x; i < num;
       i += stride)
    out[i] = to_float(x[i]);
}

} // namespace kvactor::kernels::gpu
