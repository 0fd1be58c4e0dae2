#pragma once
// The transformer's layers on the CPU, one function each, over fp32
// activations. Each runs to completion on the calling thread (the compute
// stream's worker) and spreads its work over `pool`.
//
// Shapes: T tokens, H hidden, D head_dim. Row strides are in elements.

#include <cstdint>
#include <span>
#include <string>

#include "kernels/thread_pool.hpp"
#include "model/forward/packed_matrix.hpp"
#include "model/quant/quantized_matrix.hpp"
#include "model/weights.hpp"

namespace kvactor::model::layers {

// out[t] = table[ids[t]] (fp32 or bf16 rows, widened exactly; quantised
// rows dequantised, exactly).
// out: [T, H]; table: [vocab, H]
void embedding(kernels::thread_pool& pool, const weight_view& table, std::span<const int32_t> ids,
               float* out);

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight, in place allowed.
// x: [num_rows, n] rows ldx apart; out: [num_rows, n] rows ldo apart; weight: [n]
void rms_norm(kernels::thread_pool& pool, const float* x, int64_t ldx, float* out, int64_t ldo,
              int64_t num_rows, int64_t n, const float* weight, float eps);

// Per-head RMSNorm (Qwen3's q_norm / k_norm), in place: each of the
// num_heads vectors of D of every token row.
// x: [T, num_heads, D] rows ldx apart; weight: [D]
void rms_norm_heads(kernels::thread_pool& pool, float* x, int64_t ldx, int64_t num_tokens,
                    int64_t num_heads, int64_t head_dim, const float* weight, float eps);

// y = x W^T (accumulate: y += x W^T), W's blocks split over the pool.
// Every output is one fixed chain over k through the CPU's best kernel: a
// row's result does not depend on m or on the other rows.
// W in the columns layout: fp32 activations (linear_kernels.hpp); bf16 W
// (widened exactly) gives the fp32 results of its values.
// W in the pair layout: bf16 activations (pair_kernels.hpp): x is rounded
// to bf16 (nearest even) first; lossy, about 3 significant digits.
// x: [m, w.cols()] rows ldx apart; y: [m, w.rows()] rows ldy apart
void linear(kernels::thread_pool& pool, const float* x, int64_t ldx, int64_t m,
            const packed_matrix& w, float* y, int64_t ldy, bool accumulate);

// The same with W block-quantised: x's rows are quantised to 8 bits a
// value in blocks of 32 first (quantize_rows), then every output is the
// integer chain of quant_kernels.hpp, which no other row changes.
void linear(kernels::thread_pool& pool, const float* x, int64_t ldx, int64_t m,
            const quantized_matrix& w, float* y, int64_t ldy, bool accumulate);

// y[r] += bias, row by row (Qwen2's q, k and v biases, after the product).
// y: [num_rows, n] rows ldy apart; bias: [n]
void add_bias(kernels::thread_pool& pool, float* y, int64_t ldy, int64_t num_rows, int64_t n,
              const float* bias);

// The kernel linear() runs on this CPU for W in `packing`: "fixed-order
// avx512|avx2|generic", or (pairs) "bf16 pairs amx|avx512_bf16|generic".
std::string products_name(packed_matrix::layout packing = packed_matrix::layout::columns);
// ... for W in `format`: "q8_0 integer avx512_vnni|avx_vnni|avx2|generic", and
// where AMX takes over from 16 rows, ", amx_int8 from 16 rows".
std::string products_name(quant_format format);

// Rotary embedding in the rotate-half layout of Hugging Face, in place on
// num_heads heads of each token row: for i < D/2,
//   (x[i], x[i + D/2]) <- (x[i] c - x[i + D/2] s, x[i + D/2] c + x[i] s)
// with c, s = cos, sin of the token's angle i.
// x: [T, num_heads, D] rows ldx apart; cos, sin: [T, D/2]
void rope(kernels::thread_pool& pool, float* x, int64_t ldx, int64_t num_tokens, int64_t num_heads,
          int64_t head_dim, const float* cos, const float* sin);

// cos, sin of position[t] * inv_freq[i] (angles in double).
// cos, sin: [T, D/2]
void rope_angles(std::span<const int32_t> positions, std::span<const double> inv_freq, float* cos,
                 float* sin);

// out = silu(gate) * up, in place allowed (out = gate).
// gate, up: [T, n] rows ld apart; out: [T, n] rows ldo apart
void swiglu(kernels::thread_pool& pool, const float* gate, const float* up, int64_t ld, float* out,
            int64_t ldo, int64_t num_tokens, int64_t n);

// out = x rounded to bf16 (nearest even, as f32_to_bf16), element by element.
// x: [num_rows, n] rows ldx apart; out: [num_rows, n] bf16 bits, rows ldo apart
void to_bf16(kernels::thread_pool& pool, const float* x, int64_t ldx, uint16_t* out, int64_t ldo,
             int64_t num_rows, int64_t n);

// out = x widened to fp32 (exact), element by element.
// x: [num_rows, n] bf16 bits, rows ldx apart; out: [num_rows, n] rows ldo apart
void from_bf16(kernels::thread_pool& pool, const uint16_t* x, int64_t ldx, float* out, int64_t ldo,
               int64_t num_rows, int64_t n);

} // namespace kvactor::model::layers
