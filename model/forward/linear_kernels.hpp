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
// One kernel per instruction set (linear_avx512.cpp, linear_avx2.cpp: the
// only files built with those flags), chosen at run time; one order, so the
// same bits from every one of them. Two tilings each:
//   m <= fixed_order_small_rows: blocks of 16 (8) rows of W are loaded along
//     k and transposed in registers (lanes = outputs); each row of x is
//     broadcast one k at a time. W is read once, in its own dtype (decode).
//   larger m: a panel of 64 (16) rows of W is transposed once into the
//     caller's scratch ([k, rows] fp32), then tiles of 6 rows of x run over
//     it (prefill, large decode batches).

#include <cstdint>
#include <span>

namespace kvactor::model::layers {

/// Up to this many rows of x, the kernel without a packed panel.
inline constexpr std::int64_t fixed_order_small_rows = 8;
/// Rows of W per packed panel at most: the scratch holds fixed_order_panel_rows * k floats.
inline constexpr std::int64_t fixed_order_panel_rows = 64;

/// Instruction sets with a fixed-order kernel.
enum class product_isa { avx2, avx512 };

/// Those this CPU (and OS) runs, best first; empty without AVX2 and FMA.
std::span<const product_isa> fixed_order_isas();

const char* isa_name(product_isa isa);

/// y[i, j] = the fma chain over k above (+ y[i, j] when accumulate), i < m, j < n.
// isa: one of fixed_order_isas(); x: [m, k] rows ldx apart; w: [n, k] fp32;
// y: [m, n] rows ldy apart; scratch: [fixed_order_panel_rows * k] floats
// (used when m > fixed_order_small_rows)
void fixed_order_product(product_isa isa, const float* x, std::int64_t ldx, std::int64_t m, const float* w,
                         std::int64_t n, std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);

/// The same with W in bf16 bits.
// w: [n, k] bf16 bits
void fixed_order_product(product_isa isa, const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w,
                         std::int64_t n, std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);

} // namespace kvactor::model::layers
