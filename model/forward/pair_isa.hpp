#pragma once
// Entry points of the per-ISA translation units of the bf16 pair products
// (pair_kernels.cpp dispatches). x: bf16 rows ldx apart, round_up(m, 16)
// of them readable, k columns; w: the first block of W in the pair layout
// (packed_matrix.hpp) with k stored columns; y: outputs [0, n) of each of
// the m rows. k is a multiple of 32.

#include <cstdint>

namespace kvactor::model::layers {

#define KVACTOR_PAIR_PRODUCT                                                                       \
  void product(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k, int64_t n, \
               float* y, int64_t ldy, bool accumulate);

// Requires AMX-TILE and AMX-BF16, and the OS's permission for tile data.
namespace amx {
KVACTOR_PAIR_PRODUCT
}
// Requires AVX-512 F, BW, VL and BF16.
namespace avx512_bf16 {
KVACTOR_PAIR_PRODUCT
}
// Any x86-64 CPU.
namespace pair_generic {
KVACTOR_PAIR_PRODUCT
}

#undef KVACTOR_PAIR_PRODUCT

} // namespace kvactor::model::layers
