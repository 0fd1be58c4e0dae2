// The integer block products (quant_kernels.hpp), AVX-512 VNNI: a group's 16
// rows are the 16 lanes of a vector, and one vpdpbusd adds 4 columns' u8 x
// s8 products to each lane's sum: a block's (Q8_0, Q4_0), or a K-format
// sub-block's, which the lane's integer scale (vpmulld) then scales into the
// super-block's S.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); built with -ffp-contract=off, so the chain's
// multiplies and adds stay two roundings, as in every kernel.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::avx512_vnni {
namespace {

constexpr int64_t lanes = 16, block = 32, super = 256;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m512i load(const uint8_t* p) { return _mm512_loadu_si512(p); }

// Bit 4 of each byte from bit 4 - S of that byte (16-bit shifts: for
// -3 <= S <= 4 no bit that lands on bit 4 crosses a byte).
template <int S>
inline __m512i to_bit4(__m512i v) {
  if constexpr (S > 0) return _mm512_slli_epi16(v, S);
  else if constexpr (S < 0) return _mm512_srli_epi16(v, -S);
  else return v;
}

// IQ4_NL's and IQ4_XS's u (quant_unsigned) of each nibble: one vpshufb
// table in every 128-bit lane.
inline __m512i iq4_table() {
  static constexpr iq4_table_bytes t = iq4_bytes(128);
  return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(t.b)));
}

// A block of 32 of format L (a K format's sub-block: of its k_sub_layout)
// as 8 vectors of u8, each 4 columns of all 16 rows; the codebook formats'
// nibbles to their levels' u.
template <quant_format L>
struct format {
  static constexpr int bits = quant_bits(L);
  static void load(const uint8_t* q, __m512i (&v)[8]) {
    if constexpr (bits == 8) {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) v[j] = _mm512_loadu_si512(q + 64 * j);
      return;
    }
    const __m512i low = _mm512_set1_epi8(15);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512i packed = _mm512_loadu_si512(q + 64 * j);
      v[2 * j] = _mm512_and_si512(packed, low);
      v[2 * j + 1] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low);
    }
    if constexpr (has_codebook(L)) {
      const __m512i table = iq4_table();
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) v[j] = _mm512_shuffle_epi8(table, v[j]);
    }
    if constexpr (bits == 5) {
      // NOTE: vector j's columns take their fifth bits from bits 2j (low
      // nibbles) and 2j + 1 (high) of the fifth-bit vector; each goes to
      // bit 4 and is or-ed in (vpternlogd: v | (f & 16)).
      const __m512i fifth = _mm512_loadu_si512(q + 256), bit = _mm512_set1_epi8(16);
      v[0] = _mm512_ternarylogic_epi32(v[0], to_bit4<4>(fifth), bit, 0xf8);
      v[1] = _mm512_ternarylogic_epi32(v[1], to_bit4<3>(fifth), bit, 0xf8);
      v[2] = _mm512_ternarylogic_epi32(v[2], to_bit4<2>(fifth), bit, 0xf8);
      v[3] = _mm512_ternarylogic_epi32(v[3], to_bit4<1>(fifth), bit, 0xf8);
      v[4] = _mm512_ternarylogic_epi32(v[4], fifth, bit, 0xf8);
      v[5] = _mm512_ternarylogic_epi32(v[5], to_bit4<-1>(fifth), bit, 0xf8);
      v[6] = _mm512_ternarylogic_epi32(v[6], to_bit4<-2>(fifth), bit, 0xf8);
      v[7] = _mm512_ternarylogic_epi32(v[7], to_bit4<-3>(fifth), bit, 0xf8);
    }
  }
};

inline __m512i broadcast4(const int8_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return _mm512_set1_epi32(bits);
}

// init + each lane's sum of 32 columns' products: 8 vectors of u8 (4
// columns of the 16 rows each) against x's 32 integers at `xq`.
inline __m512i block_sum(const __m512i (&v)[8], const int8_t* xq, __m512i init) {
  // NOTE: two partial sums halve the chain of dependent vpdpbusd.
  __m512i s0 = init, s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    s0 = _mm512_dpbusd_epi32(s0, v[2 * c], broadcast4(xq + 8 * c));
    s1 = _mm512_dpbusd_epi32(s1, v[2 * c + 1], broadcast4(xq + 8 * c + 4));
  }
  return _mm512_add_epi32(s0, s1);
}

// 16 bytes of metadata, one per lane, widened to 32 bits.
inline __m512i lane_bytes(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

inline __m512 lane_halves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// A tile's R x NB accumulators to y (n <= 16 NB outputs a row; + y when
// accumulate).
template <int R, int NB>
void store(const __m512 (&acc)[R][NB], int64_t n, float* y, int64_t ldy, bool accumulate) {
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      if (n <= lanes * j) break;
      const int64_t left = n - lanes * j;
      const __mmask16 mask =
        left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
      float* out = y + i * ldy + lanes * j;
      __m512 s = acc[i][j];
      if (accumulate) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, out));
      _mm512_mask_storeu_ps(out, mask, s);
    }
}

// R rows of x against NB consecutive groups (n <= 16 NB outputs of them)
// of a format of blocks of 32 (Q4_1's and Q5_1's with a min, offset 0).
template <quant_format F, int R, int NB>
void block_tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                bool accumulate) {
  constexpr int bits = quant_bits(F);
  constexpr bool min = has_block_min(F);
  using f = format<F>;
  constexpr int32_t offset = quant_offset(F);
  const int64_t group_bytes = quant_group_bytes(bits, min, x.blocks);
  const int64_t scales = x.blocks * quant_ints_bytes(bits);
  __m512 acc[R][NB];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      const uint8_t* g = w + j * group_bytes;
      const uint8_t* meta = g + scales + b * quant_scales_bytes(min);
      const __m512 dw = lane_halves(meta);
      __m512i v[8];
      f::load(g + b * quant_ints_bytes(bits), v);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const int8_t* xq = x.q + (i * x.blocks + b) * block;
        const int32_t xsum = x.sum[i * x.blocks + b];
        const __m512 dx = _mm512_set1_ps(x.d[i * x.blocks + b]);
        const __m512i isum = block_sum(v, xq, _mm512_set1_epi32(-offset * xsum));
        __m512 term = _mm512_mul_ps(_mm512_mul_ps(dw, dx), _mm512_cvtepi32_ps(isum));
        if constexpr (min)
          term = _mm512_add_ps(term, _mm512_mul_ps(_mm512_mul_ps(lane_halves(meta + 32), dx),
                                                   _mm512_set1_ps(static_cast<float>(xsum))));
        acc[i][j] = _mm512_add_ps(acc[i][j], term);
      }
    }
  }
  store<R, NB>(acc, n, y, ldy, accumulate);
}

// Sub-block s of 32 columns (Q4_K, Q5_K, IQ4_XS) of NB groups' super-block
// b (at `ints` and `meta`, groups `group_bytes` apart) against R rows of x:
// each lane's sum scaled into its S (and Q4_K's and Q5_K's min times the
// rows' sum into M), as the chain in quant_kernels.hpp defines them. The
// rows' broadcasts serve every group.
template <quant_format F, int R, int NB>
inline void sub_32(const quant_rows_view& x, int64_t b, int s, const uint8_t* ints,
                   const uint8_t* meta, int64_t group_bytes, __m512i (&total)[R][NB],
                   __m512i (&mins)[R][NB]) {
  constexpr bool with_min = has_sub_min(F);
  constexpr int32_t offset = quant_offset(F);
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) {
    const uint8_t* m = meta + j * group_bytes;
    __m512i v[8];
    format<k_sub_layout(F)>::load(ints + j * group_bytes + k_sub_bytes(F) * s, v);
    const __m512i scale = lane_bytes(m + k_scales_at(F) + 16 * s, !with_min);
    const __m512i min = with_min ? lane_bytes(m + k_mins_at + 16 * s, false) : scale;
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const int8_t* xq = x.q + (i * x.blocks + b) * super + 32 * s;
      const int32_t* xsum = x.sum + (i * x.blocks + b) * 16 + 2 * s;
      const int32_t sub_sum = xsum[0] + xsum[1];
      const __m512i t = block_sum(v, xq, _mm512_set1_epi32(-offset * sub_sum));
      total[i][j] = _mm512_add_epi32(total[i][j], _mm512_mullo_epi32(t, scale));
      if constexpr (with_min)
        mins[i][j] =
          _mm512_add_epi32(mins[i][j], _mm512_mullo_epi32(min, _mm512_set1_epi32(sub_sum)));
    }
  }
}

// The 16 columns of sub-block k of a Q2_K, Q3_K or Q6_K super-block (its
// integers at `ints`) as 4 vectors of u8: vector t columns 4t .. 4t + 3 of
// the 16 rows. Odd: k is odd (the compiler sees the pair's shift).
template <quant_format F, bool Odd>
inline void unpack_16(const uint8_t* ints, int k, __m512i (&u)[4]) {
  const uint8_t* sub = ints + k_sub_at(F, k);
  if constexpr (F == quant_format::q6_k) {
    const __m512i low = _mm512_set1_epi8(15), top = _mm512_set1_epi8(0x30);
    const __m512i p0 = load(sub), p1 = load(sub + 64), h = load(sub + 128);
    // NOTE: columns 4t .. 4t + 3 take their top bits from bits 2t, 2t + 1
    // of h, moved to bits 4, 5 (16-bit shifts: the mask drops what crosses
    // a byte).
    u[0] =
      _mm512_or_si512(_mm512_and_si512(p0, low), _mm512_and_si512(_mm512_slli_epi16(h, 4), top));
    u[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(p0, 4), low),
                           _mm512_and_si512(_mm512_slli_epi16(h, 2), top));
    u[2] = _mm512_or_si512(_mm512_and_si512(p1, low), _mm512_and_si512(h, top));
    u[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(p1, 4), low),
                           _mm512_and_si512(_mm512_srli_epi16(h, 2), top));
    return;
  }
  const __m512i two = _mm512_set1_epi8(3), p = load(sub);
  u[0] = _mm512_and_si512(p, two);
  u[1] = _mm512_and_si512(_mm512_srli_epi16(p, 2), two);
  u[2] = _mm512_and_si512(_mm512_srli_epi16(p, 4), two);
  u[3] = _mm512_and_si512(_mm512_srli_epi16(p, 6), two);
  if constexpr (F == quant_format::q3_k) {
    // NOTE: the third bits of columns 4t .. 4t + 3, bit t of each byte once
    // an odd sub-block's are moved down by 4, go to bit 2.
    __m512i h = load(ints + k_third_at(k));
    if constexpr (Odd) h = _mm512_srli_epi16(h, 4);
    const __m512i bit = _mm512_set1_epi8(4);
    u[0] = _mm512_ternarylogic_epi32(u[0], _mm512_slli_epi16(h, 2), bit, 0xf8);
    u[1] = _mm512_ternarylogic_epi32(u[1], _mm512_slli_epi16(h, 1), bit, 0xf8);
    u[2] = _mm512_ternarylogic_epi32(u[2], h, bit, 0xf8);
    u[3] = _mm512_ternarylogic_epi32(u[3], _mm512_srli_epi16(h, 1), bit, 0xf8);
  }
}

// Sub-block k of 16 columns (Q2_K, Q3_K, Q6_K) of NB groups' super-block b
// against R rows of x, into S (and Q2_K's M) as sub_32.
template <quant_format F, bool Odd, int R, int NB>
inline void sub_16(const quant_rows_view& x, int64_t b, int k, const uint8_t* ints,
                   const uint8_t* meta, int64_t group_bytes, __m512i (&total)[R][NB],
                   __m512i (&mins)[R][NB]) {
  constexpr bool q2 = F == quant_format::q2_k;
  constexpr int32_t offset = quant_offset(F);
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) {
    __m512i u[4];
    unpack_16<F, Odd>(ints + j * group_bytes, k, u);
    const uint8_t* scales = meta + j * group_bytes + k_scales_at(F) + 16 * k;
    const __m512i packed = lane_bytes(scales, !q2);
    const __m512i scale = q2 ? _mm512_and_si512(packed, _mm512_set1_epi32(15)) : packed;
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const int8_t* xq = x.q + (i * x.blocks + b) * super + 16 * k;
      const int32_t xsum = x.sum[(i * x.blocks + b) * 16 + k];
      // NOTE: one chain from -offset times the rows' sum: no add of partial
      // sums, no subtraction.
      __m512i t = _mm512_set1_epi32(-offset * xsum);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) t = _mm512_dpbusd_epi32(t, u[c], broadcast4(xq + 4 * c));
      total[i][j] = _mm512_add_epi32(total[i][j], _mm512_mullo_epi32(t, scale));
      if constexpr (q2)
        mins[i][j] = _mm512_add_epi32(
          mins[i][j], _mm512_mullo_epi32(_mm512_srli_epi32(packed, 4), _mm512_set1_epi32(xsum)));
    }
  }
}

// The same for the K formats: super-block by super-block, sub-block by
// sub-block across the NB groups.
template <quant_format F, int R, int NB>
void super_tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                bool accumulate) {
  const int64_t group_bytes = k_group_bytes(F, x.blocks);
  const int64_t metadata = x.blocks * k_ints_bytes(F);
  __m512 acc[R][NB];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
    const uint8_t* ints = w + b * k_ints_bytes(F);
    const uint8_t* meta = w + metadata + b * k_meta_bytes(F);
    __m512i total[R][NB], mins[R][NB];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j) total[i][j] = mins[i][j] = _mm512_setzero_si512();
    if constexpr (quant_sub_values(F) == 16)
      for (int k = 0; k < 16; k += 2) {
        sub_16<F, false, R, NB>(x, b, k, ints, meta, group_bytes, total, mins);
        sub_16<F, true, R, NB>(x, b, k + 1, ints, meta, group_bytes, total, mins);
      }
    else
      for (int s = 0; s < 8; ++s)
        sub_32<F, R, NB>(x, b, s, ints, meta, group_bytes, total, mins);
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      const __m512 d = lane_halves(meta + j * group_bytes);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const __m512 dx = _mm512_set1_ps(x.d[i * x.blocks + b]);
        const __m512 scaled = _mm512_mul_ps(_mm512_mul_ps(d, dx), _mm512_cvtepi32_ps(total[i][j]));
        if constexpr (has_sub_min(F)) {
          const __m512 dmin = lane_halves(meta + j * group_bytes + 32);
          const __m512 offset =
            _mm512_mul_ps(_mm512_mul_ps(dmin, dx), _mm512_cvtepi32_ps(mins[i][j]));
          acc[i][j] = _mm512_add_ps(acc[i][j], _mm512_sub_ps(scaled, offset));
        } else {
          acc[i][j] = _mm512_add_ps(acc[i][j], scaled);
        }
      }
    }
  }
  store<R, NB>(acc, n, y, ldy, accumulate);
}

// What the drivers below need of a format: a group's bytes, x from row i
// on, and the tile. Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL: blocks of 32 with
// one sum each.
template <quant_format F>
struct blocks_of_32 {
  static int64_t group_bytes(int64_t blocks) {
    return quant_group_bytes(quant_bits(F), has_block_min(F), blocks);
  }
  static quant_rows_view rows_from(const quant_rows_view& x, int64_t i) {
    return {x.q + i * x.blocks * block, x.d + i * x.blocks, x.sum + i * x.blocks, x.blocks};
  }
  template <int R, int NB>
  static void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                   bool accumulate) {
    block_tile<F, R, NB>(x, w, n, y, ldy, accumulate);
  }
};

// The K formats: super-blocks of 256 with 16 sums each.
template <quant_format F>
struct super_blocks {
  static int64_t group_bytes(int64_t blocks) { return k_group_bytes(F, blocks); }
  static quant_rows_view rows_from(const quant_rows_view& x, int64_t i) {
    return {x.q + i * x.blocks * super, x.d + i * x.blocks, x.sum + i * x.blocks * 16, x.blocks};
  }
  template <int R, int NB>
  static void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
                   bool accumulate) {
    super_tile<F, R, NB>(x, w, n, y, ldy, accumulate);
  }
};

// A tile of `rows` (1 .. R) rows.
template <class F, int R, int NB>
void tile_of(int64_t rows, const quant_rows_view& x, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R) F::template tile<R, NB>(x, w, n, y, ldy, accumulate);
    else tile_of<F, R - 1, NB>(rows, x, w, n, y, ldy, accumulate);
  }
}

// All m rows against NB groups, in tiles of up to R rows
// (next_tile_rows), while the groups stay in cache.
template <class F, int R, int NB>
void group(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
           int64_t ldy, bool accumulate) {
  for (int64_t i = 0, rows = 0; i < m; i += rows) {
    rows = next_tile_rows(m - i, R);
    tile_of<F, R, NB>(rows, F::rows_from(x, i), w, n, y + i * ldy, ldy, accumulate);
  }
}

// Every group, NB at a time, then the rest one by one.
template <class F, int R, int NB>
void sweep(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
           int64_t ldy, bool accumulate) {
  const int64_t group_bytes = F::group_bytes(x.blocks);
  const int64_t num_groups = (n + lanes - 1) / lanes;
  int64_t g = 0;
  for (; g + NB <= num_groups; g += NB)
    group<F, R, NB>(x, m, w + g * group_bytes, at_most(lanes * NB, n - lanes * g), y + lanes * g,
                    ldy, accumulate);
  for (; g < num_groups; ++g)
    group<F, R, 1>(x, m, w + g * group_bytes, at_most(lanes, n - lanes * g), y + lanes * g, ldy,
                   accumulate);
}

// NOTE: the loaded or unpacked vectors, the rows' sums and the
// accumulators in 32 registers: 1 row x 4 groups, 4 x 2, and for many rows
// (prefill) 5 x 1, whose single-use broadcasts of x fold into vpdpbusd:
// measured faster than 4 x 2 at 128 rows on every format (a fifth on Q2_K,
// Q3_K, Q5_0 and Q6_K), and from 16 rows on Q4_K, Q5_K and IQ4_XS; below 32
// rows the others' 4 x 2, streaming two groups from memory at once, ran a
// tenth faster (W of 32768 x 2048).
template <class F>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate, int64_t five_rows_from) {
  if (m == 1) return sweep<F, 1, 4>(x, m, w, n, y, ldy, accumulate);
  if (m >= five_rows_from) return sweep<F, 5, 1>(x, m, w, n, y, ldy, accumulate);
  sweep<F, 4, 2>(x, m, w, n, y, ldy, accumulate);
}

// The entry of format F.
template <quant_format F>
void product_of(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                int64_t ldy, bool accumulate) {
  if constexpr (is_k_format(F))
    product<super_blocks<F>>(x, m, w, n, y, ldy, accumulate, quant_sub_values(F) == 32 ? 16 : 32);
  else
    product<blocks_of_32<F>>(x, m, w, n, y, ldy, accumulate, 32);
}

} // namespace

const quant_products products = KVACTOR_QUANT_PRODUCTS_OF(product_of);

} // namespace kvactor::model::layers::avx512_vnni
