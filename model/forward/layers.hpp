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
#include "model/weights.hpp"

namespace kvactor::model::layers {

/// out[t] = table[ids[t]] (fp32 or bf16 rows, widened exactly).
// out: [T, H]; table: [vocab, H]
void embedding(kernels::thread_pool& pool, const weight_view& table, std::span<const std::int32_t> ids,
               float* out);

/// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight, in place allowed.
// x: [num_rows, n] rows ldx apart; out: [num_rows, n] rows ldo apart; weight: [n]
void rms_norm(kernels::thread_pool& pool, const float* x, std::int64_t ldx, float* out, std::int64_t ldo,
              std::int64_t num_rows, std::int64_t n, const float* weight, float eps);

/// Per-head RMSNorm (Qwen3's q_norm / k_norm), in place: each of the
/// num_heads vectors of D of every token row.
// x: [T, num_heads, D] rows ldx apart; weight: [D]
void rms_norm_heads(kernels::thread_pool& pool, float* x, std::int64_t ldx, std::int64_t num_tokens,
                    std::int64_t num_heads, std::int64_t head_dim, const float* weight, float eps);

/// y = x W^T (accumulate: y += x W^T), the columns of y split over the pool.
/// On CPUs with AVX-512 every output is one fixed fused multiply-add chain
/// over k (linear_kernels.hpp): a row's result does not depend on m or on
/// the other rows, and bf16 W (widened exactly) gives the fp32 results bit
/// for bit. Elsewhere OpenBLAS, whose order depends on m.
// x: [m, k] rows ldx apart; w: [n, k]; y: [m, n] rows ldy apart
void linear(kernels::thread_pool& pool, const float* x, std::int64_t ldx, std::int64_t m, const weight_view& w,
            float* y, std::int64_t ldy, bool accumulate);

/// Rotary embedding in the rotate-half layout of Hugging Face, in place on
/// num_heads heads of each token row: for i < D/2,
///   (x[i], x[i + D/2]) <- (x[i] c - x[i + D/2] s, x[i + D/2] c + x[i] s)
/// with c, s = cos, sin of the token's angle i.
// x: [T, num_heads, D] rows ldx apart; cos, sin: [T, D/2]
void rope(kernels::thread_pool& pool, float* x, std::int64_t ldx, std::int64_t num_tokens, std::int64_t num_heads,
          std::int64_t head_dim, const float* cos, const float* sin);

/// cos, sin of position[t] * inv_freq[i] (angles in double).
// cos, sin: [T, D/2]
void rope_angles(std::span<const std::int32_t> positions, std::span<const double> inv_freq, float* cos, float* sin);

/// out = silu(gate) * up.
// gate, up, out: [T, n] contiguous
void swiglu(kernels::thread_pool& pool, const float* gate, const float* up, float* out, std::int64_t num_tokens,
            std::int64_t n);

/// Prepares OpenBLAS once per process: single-threaded (see linear), and
/// on a CPU that Debian's OpenBLAS 0.3.21 does not know (it falls back to its
/// SSE3 "Prescott" kernels) the kernels of the best instruction set the CPU
/// has. OPENBLAS_CORETYPE set by the user wins. Returns the core in use.
const char* configure_blas();

/// What computes linear's products on this CPU: "fixed-order avx512",
/// "fixed-order avx2" or "OpenBLAS <core>" (after configure_blas()).
std::string products_name();

} // namespace kvactor::model::layers
