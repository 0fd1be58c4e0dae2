#pragma once
// y = x W^T in one fixed summation order: every output is the fused
// multiply-add chain
//
//   s = 0; for c = 0, 1, ..., k - 1: s = fma(x[i, c], W[j, c], s)
//   y[i, j] = s            (accumulate: y[i, j] = s + y[i, j])
//
// whatever m, the row's place in x, the split over threads or the tile the
// kernel picks. This makes the forward pass batch-invariant: a token's
// products do not depend on what else is in the step. bf16 W is widened
// exactly, so it gives the fp32 results bit for bit.
//
// AVX-512 only (linear_avx512.cpp is the one file built with -mavx512*; call
// after has_fixed_order_products()). Two kernels, one order:
//   m <= fixed_order_small_rows: blocks of 16 rows of W are loaded along k
//     and transposed in registers (lanes = 16 outputs); each row of x is
//     broadcast one k at a time. W is read once, in its own dtype (decode).
//   larger m: a panel of fixed_order_panel_rows rows of W is transposed once
//     into the caller's scratch ([k, 64] fp32), then tiles of 6 rows of x run
//     over it with 24 accumulators (prefill, large decode batches).

#include <cstdint>

namespace kvactor::model::layers {

/// Up to this many rows of x, the kernel without a packed panel.
inline constexpr std::int64_t fixed_order_small_rows = 8;
/// Rows of W per packed panel: the scratch holds fixed_order_panel_rows * k floats.
inline constexpr std::int64_t fixed_order_panel_rows = 64;

/// True when the CPU and OS run AVX-512 F, BW and VL.
bool has_fixed_order_products();

/// y[i, j] = the fma chain over k above (+ y[i, j] when accumulate), i < m, j < n.
// x: [m, k] rows ldx apart; w: [n, k] fp32; y: [m, n] rows ldy apart;
// scratch: [fixed_order_panel_rows * k] floats (used when m > fixed_order_small_rows)
void fixed_order_product(const float* x, std::int64_t ldx, std::int64_t m, const float* w, std::int64_t n,
                         std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);

/// The same with W in bf16 bits.
// w: [n, k] bf16 bits
void fixed_order_product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
                         std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);

} // namespace kvactor::model::layers
