// The integer block products (quant_kernels.hpp), AVX-512 VNNI: a group's 16
// rows are the 16 lanes of a vector, and one vpdpbusd adds 4 columns' u8 x
// s8 products to each lane's block sum.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); built with -ffp-contract=off, so the chain's
// multiplies and adds stay two roundings, as in every kernel.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::avx512_vnni {
namespace {

constexpr int64_t lanes = 16, block = 32;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

// Q8_0 and Q4_0 alike: 8 vectors of u8, each 4 columns of all 16 rows.
template <bool Q4>
struct format {
  static constexpr int32_t offset = Q4 ? 8 : 128;
  static void load(const uint8_t* q, __m512i (&v)[8]) {
    if constexpr (Q4) {
      const __m512i low = _mm512_set1_epi8(15);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m512i packed = _mm512_loadu_si512(q + 64 * j);
        v[2 * j] = _mm512_and_si512(packed, low);
        v[2 * j + 1] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low);
      }
    } else {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) v[j] = _mm512_loadu_si512(q + 64 * j);
    }
  }
};

inline __m512i broadcast4(const int8_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return _mm512_set1_epi32(bits);
}

// R rows of x against NB consecutive groups (n <= 16 NB outputs of them).
template <bool Q4, int R, int NB>
void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
          bool accumulate) {
  using f = format<Q4>;
  const int64_t group_bytes = quant_group_bytes(Q4, x.blocks);
  const int64_t scales = x.blocks * quant_ints_bytes(Q4);
  __m512 acc[R][NB];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      const uint8_t* g = w + j * group_bytes;
      const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(g + scales + b * quant_scales_bytes)));
      __m512i v[8];
      f::load(g + b * quant_ints_bytes(Q4), v);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const int8_t* xq = x.q + (i * x.blocks + b) * block;
        // NOTE: two partial sums halve the chain of dependent vpdpbusd.
        __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          s0 = _mm512_dpbusd_epi32(s0, v[2 * c], broadcast4(xq + 8 * c));
          s1 = _mm512_dpbusd_epi32(s1, v[2 * c + 1], broadcast4(xq + 8 * c + 4));
        }
        const __m512i isum = _mm512_sub_epi32(
          _mm512_add_epi32(s0, s1), _mm512_set1_epi32(f::offset * x.sum[i * x.blocks + b]));
        const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(x.d[i * x.blocks + b]));
        acc[i][j] = _mm512_add_ps(acc[i][j], _mm512_mul_ps(scale, _mm512_cvtepi32_ps(isum)));
      }
    }
  }
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

inline quant_rows_view rows_from(const quant_rows_view& x, int64_t i) {
  return {x.q + i * x.blocks * block, x.d + i * x.blocks, x.sum + i * x.blocks, x.blocks};
}

template <bool Q4, int R, int NB>
void tail_rows(int64_t rows, const quant_rows_view& x, const uint8_t* w, int64_t n, float* y,
               int64_t ldy, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R) tile<Q4, R, NB>(x, w, n, y, ldy, accumulate);
    else tail_rows<Q4, R - 1, NB>(rows, x, w, n, y, ldy, accumulate);
  }
}

// All m rows against NB groups: tiles of R rows, then the rest, while the
// groups stay in cache.
template <bool Q4, int R, int NB>
void group(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
           int64_t ldy, bool accumulate) {
  int64_t i = 0;
  for (; i + R <= m; i += R) tile<Q4, R, NB>(rows_from(x, i), w, n, y + i * ldy, ldy, accumulate);
  tail_rows<Q4, R - 1, NB>(m - i, rows_from(x, i), w, n, y + i * ldy, ldy, accumulate);
}

// Every group, NB at a time, then the rest one by one.
template <bool Q4, int R, int NB>
void sweep(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
           int64_t ldy, bool accumulate) {
  const int64_t group_bytes = quant_group_bytes(Q4, x.blocks);
  const int64_t num_groups = (n + lanes - 1) / lanes;
  int64_t g = 0;
  for (; g + NB <= num_groups; g += NB)
    group<Q4, R, NB>(x, m, w + g * group_bytes, at_most(lanes * NB, n - lanes * g),
                     y + lanes * g, ldy, accumulate);
  for (; g < num_groups; ++g)
    group<Q4, R, 1>(x, m, w + g * group_bytes, at_most(lanes, n - lanes * g), y + lanes * g, ldy,
                    accumulate);
}

template <bool Q4>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  // NOTE: 8 loaded vectors + accumulators + partial sums in 32 registers:
  // 1 row x 4 groups, 4 x 2 (8 accumulators).
  if (m == 1) return sweep<Q4, 1, 4>(x, m, w, n, y, ldy, accumulate);
  sweep<Q4, 4, 2>(x, m, w, n, y, ldy, accumulate);
}

} // namespace

void product_q8_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<false>(x, m, w, n, y, ldy, accumulate);
}

void product_q4_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<true>(x, m, w, n, y, ldy, accumulate);
}

} // namespace kvactor::model::layers::avx512_vnni
