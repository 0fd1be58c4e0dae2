#pragma once
// Entry points of the per-ISA translation units of the integer block
// products (quant_kernels.cpp dispatches). x: the quantised rows (row i's
// block b at q + (i * blocks + b) * 32, d and sum at i * blocks + b);
// w: the first group of W (quantized_matrix layout) with `blocks` blocks a
// row; y: outputs [0, n) of each of the m rows.

#include <cstdint>

#include "model/quant/quant_format.hpp"

namespace kvactor::model::layers {

// The blocks of 32 are laid out by the bits of their stored integers: 8
// (Q8_0), 4 (Q4_0, Q4_1, IQ4_NL), 5 (Q5_0, Q5_1), and whether they have a
// min; the K formats' super-blocks by their format.
//
// The repacked layout of a group of 16 rows (quantized_matrix.hpp): every
// block's integers (64-byte vectors from the group's start, so that every
// vector load is aligned), then every block's 16 fp16 scales (and, for Q4_1
// and Q5_1, `min`, its 16 fp16 mins after them); groups start 64 bytes
// apart. `static`: each translation unit its own copy (see
// linear_avx512.cpp on inline code built with other flags).
static constexpr int64_t quant_ints_bytes(int bits) {
  return bits == 8 ? 512 : bits == 5 ? 320 : 256;
}
static constexpr int64_t quant_scales_bytes(bool min) { return min ? 64 : 32; }
static constexpr int64_t quant_group_bytes(int bits, bool min, int64_t blocks) {
  return (blocks * (quant_ints_bytes(bits) + quant_scales_bytes(min)) + 63) / 64 * 64;
}

// Where lane `lane`'s integer of column c sits in a block's vectors: the
// byte from the block's start and the shift of its bits. Q8_0 (byte_at): 4
// columns a lane's dword, a byte each; the 4- and 5-bit formats' low
// nibbles (nibble_at): vector v holds columns 8v .. 8v + 3 in the low
// nibbles, 8v + 4 .. 8v + 7 in the high ones; their fifth bits (fifth_bit_at),
// one vector after the 4 of nibbles: bit c / 4 of byte c % 4 of the lane's
// dword; 2-bit fields of 16 columns (pair_at): bits 2 (c / 4) of byte c % 4
// of the lane's dword.
struct quant_position {
  int64_t byte;
  int shift;
};
static constexpr quant_position byte_at(int64_t lane, int64_t c) {
  return {(c / 4 * 16 + lane) * 4 + c % 4, 0};
}
static constexpr quant_position nibble_at(int64_t lane, int64_t c) {
  return {(c / 8 * 16 + lane) * 4 + c % 4, c % 8 < 4 ? 0 : 4};
}
static constexpr quant_position fifth_bit_at(int64_t lane, int64_t c) {
  return {256 + lane * 4 + c % 4, static_cast<int>(c / 4)};
}
static constexpr quant_position pair_at(int64_t lane, int64_t c) {
  return {lane * 4 + c % 4, static_cast<int>(2 * (c / 4))};
}

// The stored integer of lane `lane`, column c of a block of 32 columns of
// `bits` 8, 4 or 5 (a Q4_K, Q5_K or IQ4_XS sub-block is laid out as a Q4_0,
// Q5_0 or IQ4_NL block): the kernels' u but for IQ4_NL's and IQ4_XS's,
// indices that quant_unsigned turns into their u.
static constexpr int32_t stored_int(int bits, const uint8_t* q, int64_t lane, int64_t c) {
  if (bits == 8) return q[byte_at(lane, c).byte];
  const quant_position low = nibble_at(lane, c);
  const int32_t n = q[low.byte] >> low.shift & 15;
  if (bits == 4) return n;
  const quant_position fifth = fifth_bit_at(lane, c);
  return n | (q[fifth.byte] >> fifth.shift & 1) << 4;
}

// IQ4's 16 levels, each plus `plus`, as the bytes of a vpshufb table that
// turns indices into them (128: the kernels' u; 0: the signed levels).
struct iq4_table_bytes {
  alignas(16) char b[16];
};
static constexpr iq4_table_bytes iq4_bytes(int plus) {
  iq4_table_bytes t{};
  for (int n = 0; n < 16; ++n) t.b[n] = static_cast<char>(iq4_levels[n] + plus);
  return t;
}

// The K formats (quantized_matrix.hpp), per super-block of a group: the
// integers, then after every super-block's integers each super-block's
// metadata.
//   Q4_K, Q5_K: 8 sub-blocks laid out as Q4_0's or Q5_0's blocks; fp16
//     d[16], fp16 dmin[16], u8 scale[8][16], u8 min[8][16].
//   IQ4_XS: 8 sub-blocks laid out as IQ4_NL's (Q4_0's) blocks; fp16 d[16],
//     s8 scale[8][16].
//   Q6_K: 16 sub-blocks of 16 columns, each 2 nibble vectors (as a Q4_0
//     block's first two) and 1 vector of top bits (pair_at); fp16 d[16],
//     s8 scale[16][16].
//   Q3_K: 16 sub-blocks of 16 in pairs: sub-blocks 2p and 2p + 1's vectors
//     of low 2 bits (pair_at), then one of their third bits (column c of
//     sub-block k at bit 4 (k % 2) + c / 4 of byte c % 4 of the lane's
//     dword); fp16 d[16], s8 scale[16][16].
//   Q2_K: 16 sub-blocks of 16, each a vector of 2 bits (pair_at); fp16
//     d[16], fp16 dmin[16], u8 scale | min << 4 [16][16].
using kf = quant_format;
static constexpr int64_t k_subs(kf f) { return 256 / quant_sub_values(f); }
static constexpr int64_t k_sub_bytes(kf f) {
  return f == kf::q6_k ? 192 : f == kf::q3_k ? 96 : f == kf::q2_k ? 64
                                                                  : quant_ints_bytes(quant_bits(f));
}
static constexpr int64_t k_ints_bytes(kf f) { return k_subs(f) * k_sub_bytes(f); }
// Whether the mins have bytes of their own (Q4_K, Q5_K; Q2_K's share the
// scales' bytes).
static constexpr bool k_min_bytes(kf f) { return f == kf::q4_k || f == kf::q5_k; }
// Bytes of sub-block k's metadata per lane, 16 apart: the (Q2_K: packed)
// scales after d (and dmin), and Q4_K's and Q5_K's mins after them.
static constexpr int64_t k_scales_at(kf f) { return has_sub_min(f) ? 64 : 32; }
static constexpr int64_t k_mins_at = 192;
static constexpr int64_t k_meta_bytes(kf f) {
  return k_scales_at(f) + 16 * k_subs(f) * (k_min_bytes(f) ? 2 : 1);
}
static constexpr int64_t k_group_bytes(kf f, int64_t blocks) {
  return (blocks * (k_ints_bytes(f) + k_meta_bytes(f)) + 63) / 64 * 64;
}
// The format of blocks of 32 whose block layout a sub-block of 32 (of
// Q4_K, Q5_K or IQ4_XS; no other K format has them) has: Q4_0, Q5_0,
// IQ4_NL.
static constexpr kf k_sub_layout(kf f) {
  return f == kf::q5_k ? kf::q5_0 : f == kf::iq4_xs ? kf::iq4_nl : kf::q4_0;
}
// Sub-block k's first vector from the super-block's integers.
static constexpr int64_t k_sub_at(kf f, int64_t k) {
  return f == kf::q3_k ? 192 * (k / 2) + 64 * (k % 2) : k * k_sub_bytes(f);
}
// Lane `lane`'s integer scale and min of sub-block k, from a super-block's
// metadata: Q2_K's packed in one byte, Q4_K's and Q5_K's unsigned beside
// their mins, the others' signed (min 0).
static constexpr int32_t k_sub_scale(kf f, const uint8_t* meta, int64_t k, int64_t lane) {
  const uint8_t b = meta[k_scales_at(f) + 16 * k + lane];
  return f == kf::q2_k ? b & 15 : has_sub_min(f) ? b : static_cast<int8_t>(b);
}
static constexpr int32_t k_sub_min(kf f, const uint8_t* meta, int64_t k, int64_t lane) {
  return f == kf::q2_k        ? meta[k_scales_at(f) + 16 * k + lane] >> 4
         : k_min_bytes(f) ? meta[k_mins_at + 16 * k + lane]
                          : 0;
}
// Q3_K: the vector of sub-block k's third bits, and the third bit of its
// column c, from the super-block's integers.
static constexpr int64_t k_third_at(int64_t k) { return 192 * (k / 2) + 128; }
static constexpr quant_position third_bit_at(int64_t k, int64_t lane, int64_t c) {
  return {k_third_at(k) + pair_at(lane, c).byte, static_cast<int>(4 * (k % 2) + c / 4)};
}

// The stored integer n of lane `lane`, column c of a K-format super-block
// (its integers at `ints`; the kernels multiply quant_unsigned(f, n)).
static constexpr int32_t k_stored(kf f, const uint8_t* ints, int64_t lane, int64_t c) {
  if (quant_sub_values(f) == 32)
    return stored_int(quant_bits(f), ints + c / 32 * k_sub_bytes(f), lane, c % 32);
  const int64_t k = c / 16;
  const uint8_t* sub = ints + k_sub_at(f, k);
  c %= 16;
  if (f == kf::q6_k) {
    const quant_position low = nibble_at(lane, c), top = pair_at(lane, c);
    return (sub[low.byte] >> low.shift & 15) | (sub[128 + top.byte] >> top.shift & 3) << 4;
  }
  const quant_position low = pair_at(lane, c);
  const int32_t n = sub[low.byte] >> low.shift & 3;
  if (f == kf::q2_k) return n;
  const quant_position third = third_bit_at(k, lane, c);
  return n | (ints[third.byte] >> third.shift & 1) << 2;
}

// How many rows the next tile of a kernel whose tiles hold at most `most`
// takes when `left` remain: `most`, all of them when fewer, and half of
// most + 1 (rounded up) when that many remain, which would otherwise leave
// a tile of one row that unpacks W for that row alone.
static constexpr int64_t next_tile_rows(int64_t left, int64_t most) {
  if (most >= 3 && left == most + 1) return (most + 2) / 2;
  return left < most ? left : most;
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

// A kernel's products, indexed by quant_format.
using quant_product_fn = void (*)(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n,
                                  float* y, int64_t ldy, bool accumulate);
static_assert(static_cast<int>(quant_format::iq4_xs) == 11,
              "KVACTOR_QUANT_PRODUCTS_OF lists every format");
struct quant_products {
  quant_product_fn of[12];
};
// The table of a kernel's function template `fn<quant_format>`.
#define KVACTOR_QUANT_PRODUCTS_OF(fn)                                                              \
  quant_products {                                                                                 \
    {                                                                                              \
      fn<quant_format::q8_0>, fn<quant_format::q4_0>, fn<quant_format::q4_1>,                      \
        fn<quant_format::q5_0>, fn<quant_format::q5_1>, fn<quant_format::q2_k>,                    \
        fn<quant_format::q3_k>, fn<quant_format::q4_k>, fn<quant_format::q5_k>,                    \
        fn<quant_format::q6_k>, fn<quant_format::iq4_nl>, fn<quant_format::iq4_xs>                 \
    }                                                                                              \
  }

// Each kernel's table, defined in its translation unit.
// Requires AMX-TILE, AMX-INT8, AVX-512 F, BW, VL and F16C, and the OS's
// permission for tile data.
namespace amx_int8 {
extern const quant_products products;
}
// Requires AVX-512 F, BW, VL and VNNI.
namespace avx512_vnni {
extern const quant_products products;
}
// Requires AVX2, F16C and AVX-VNNI.
namespace avx_vnni {
extern const quant_products products;
}
// Requires AVX2, F16C and FMA.
namespace avx2 {
extern const quant_products products;
}
// Any x86-64 CPU.
namespace quant_generic {
extern const quant_products products;
}

// This thread's scratch of at least `bytes`, 64-byte aligned; its contents
// last until the thread's next call.
uint8_t* quant_scratch(int64_t bytes);

} // namespace kvactor::model::layers
