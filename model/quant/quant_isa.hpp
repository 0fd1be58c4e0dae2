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

// The K formats (quantized_matrix.hpp), per super-block of a group: the
// integers (Q4_K: 8 sub-blocks of 4 vectors, as Q4_0's; Q6_K: 16 sub-blocks
// of 2 nibble vectors and 1 vector of top bits), and after every
// super-block's integers, each super-block's metadata: Q4_K fp16 d[16],
// fp16 dmin[16], u8 scale[8][16], u8 min[8][16]; Q6_K fp16 d[16],
// s8 scale[16][16].
static constexpr int64_t k_ints_bytes(bool q6) { return q6 ? 16 * 192 : 8 * 256; }
static constexpr int64_t k_meta_bytes(bool q6) { return q6 ? 32 + 256 : 64 + 256; }
static constexpr int64_t k_group_bytes(bool q6, int64_t blocks) {
  return (blocks * (k_ints_bytes(q6) + k_meta_bytes(q6)) + 63) / 64 * 64;
}

// Activations for the K formats come in blocks of 256 with one scale and
// an integer sum per 16 values: row i's block b at q + (i * blocks + b) * 256,
// d at i * blocks + b, its 16 sums from sum + (i * blocks + b) * 16.
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
                    int64_t ldy, bool accumulate);                                                 \
  void product_q4_k(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,    \
                    int64_t ldy, bool accumulate);                                                 \
  void product_q6_k(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,    \
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
