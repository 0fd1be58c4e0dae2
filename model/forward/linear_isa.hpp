#pragma once
// Entry points of the per-ISA translation units of the fixed-order products
// (linear_tiles.inl; linear_kernels.cpp dispatches). w: the first packed
// block of W (packed_matrix layout) with k columns; y: outputs [0, n) of
// each of the m rows of x.

#include <cstdint>

namespace kvactor::model::layers {

#define KVACTOR_FIXED_ORDER_PRODUCTS                                                               \
  void product(const float* x, int64_t ldx, int64_t m, const float* w, int64_t k, int64_t n,       \
               float* y, int64_t ldy, bool accumulate);                                            \
  void product(const float* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k, int64_t n,    \
               float* y, int64_t ldy, bool accumulate);

// Requires AVX-512 F, BW and VL.
namespace avx512 {
KVACTOR_FIXED_ORDER_PRODUCTS
}
// Requires AVX2 and FMA.
namespace avx2 {
KVACTOR_FIXED_ORDER_PRODUCTS
}
// Any x86-64 CPU; multiplies and adds unfused.
namespace generic {
KVACTOR_FIXED_ORDER_PRODUCTS
}

#undef KVACTOR_FIXED_ORDER_PRODUCTS

} // namespace kvactor::model::layers
