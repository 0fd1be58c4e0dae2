#pragma once
// Entry points of the per-ISA translation units of the integer block
// products (quant_kernels.cpp dispatches). x: the quantised rows (row i's
// block b at q + (i * blocks + b) * 32, d and sum at i * blocks + b);
// w: the first group of W (quantized_matrix layout) with `blocks` blocks a
// row; y: outputs [0, n) of each of the m rows.

#include <cstdint>

namespace kvactor::model::layers {

// The repacked layout of a group of 16 rows (quantized_matrix.hpp): every
// block's integers (64-byte vectors from the group's start, so that every
// vector load is aligned), then every block's 16 fp16 scales; groups start
// 64 bytes apart. `static`: each translation unit its own copy (see
// linear_avx512.cpp on inline code built with other flags).
static constexpr int64_t quant_ints_bytes(bool q4) { return q4 ? 256 : 512; }
static constexpr int64_t quant_scales_bytes = 32;
static constexpr int64_t quant_group_bytes(bool q4, int64_t blocks) {
  return (blocks * (quant_ints_bytes(q4) + quant_scales_bytes) + 63) / 64 * 64;
}

struct quant_rows_view {
  const int8_t* q;
  const float* d;
  const int32_t* sum;
  int64_t blocks;
};

#define KVACTOR_QUANT_PRODUCTS                                                                     \
  void product_q8_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,    \
                    int64_t ldy, bool accumulate);                                                 \
  void product_q4_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,    \
                    int64_t ldy, bool accumulate);

// Requires AVX-512 F, BW, VL and VNNI.
namespace avx512_vnni {
KVACTOR_QUANT_PRODUCTS
}
// Requires AVX2, F16C and AVX-VNNI.
namespace avx_vnni {
KVACTOR_QUANT_PRODUCTS
}
// Requires AVX2, F16C and FMA.
namespace avx2 {
KVACTOR_QUANT_PRODUCTS
}
// Any x86-64 CPU.
namespace quant_generic {
KVACTOR_QUANT_PRODUCTS
}

#undef KVACTOR_QUANT_PRODUCTS

} // namespace kvactor::model::layers
