#pragma once
// Entry points of the per-ISA translation units of the fixed-order products
// (linear_kernels.hpp promises their order; linear_kernels.cpp dispatches).

#include <cstdint>

#include "model/forward/linear_kernels.hpp"

namespace kvactor::model::layers {

// Requires AVX-512 F, BW and VL.
namespace avx512 {
void product(const float* x, std::int64_t ldx, std::int64_t m, const float* w, std::int64_t n, std::int64_t k,
             float* y, std::int64_t ldy, bool accumulate, float* scratch);
void product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
             std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);
} // namespace avx512

// Requires AVX2 and FMA.
namespace avx2 {
void product(const float* x, std::int64_t ldx, std::int64_t m, const float* w, std::int64_t n, std::int64_t k,
             float* y, std::int64_t ldy, bool accumulate, float* scratch);
void product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
             std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch);
} // namespace avx2

} // namespace kvactor::model::layers
