#pragma once
// y = x W^T for a few rows of x and a bf16 W, fused: each W element is
// widened (exact) inside the FMA loop, so W is read once, in bf16, with fp32
// products and sums. The decode path for small batches; AVX-512 only
// (linear_bf16_avx512.cpp is the one file built with -mavx512f -mavx512bw).

#include <cstdint>

namespace kvactor::model::layers {

/// The most rows of x the fused product takes.
inline constexpr std::int64_t fused_bf16_max_rows = 4;

/// True when the CPU and OS run AVX-512 F and BW.
bool has_fused_bf16();

/// y[i, j] = sum_k x[i, k] * W[j, k] (+ beta * y[i, j]) for i < m <= 4, j < n.
// x: [m, k] rows ldx apart; w: [n, k] bf16 bits; y: [m, n] rows ldy apart
void fused_bf16_product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
                        std::int64_t k, float beta, float* y, std::int64_t ldy);

} // namespace kvactor::model::layers
