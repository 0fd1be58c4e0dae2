// The integer block products (quant_kernels.hpp), AVX2: a group's 16 rows
// are two vectors of 8 lanes. vpmaddubsw multiplies u8 by s8 into 16-bit
// pairs, so Q8_0's integers go in as |q| beside x carrying q's sign (at
// most 128 x 127 x 2, no saturation) and Q4_0's nibbles as they are.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); built with -ffp-contract=off, as every kernel.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::avx2 {
namespace {

constexpr int64_t lanes = 16, block = 32;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m256i broadcast4(const int8_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return _mm256_set1_epi32(bits);
}

// Half h (lanes 8h .. 8h + 7) of vector j of a block's integers.
inline __m256i load_half(const uint8_t* q, int j, int h) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * j + 32 * h));
}

// The sum over one half's block of q_w * q_x, per lane (exact).
template <bool Q4>
inline __m256i block_sum(const uint8_t* q, int h, const int8_t* xq, int32_t xsum) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i s = _mm256_setzero_si256();
  if constexpr (Q4) {
    const __m256i low = _mm256_set1_epi8(15);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m256i packed = load_half(q, j, h);
      const __m256i lo = _mm256_and_si256(packed, low);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low);
      const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, broadcast4(xq + 8 * j)),
                                         _mm256_maddubs_epi16(hi, broadcast4(xq + 8 * j + 4)));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return _mm256_sub_epi32(s, _mm256_set1_epi32(8 * xsum));
  } else {
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i w = _mm256_xor_si256(load_half(q, j, h), flip); // q, signed
      const __m256i p =
        _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(broadcast4(xq + 4 * j), w));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return s;
  }
}

// R rows of x against one group (n <= 16 outputs of it).
template <bool Q4, int R>
void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
          bool accumulate) {
  const int64_t scales = x.blocks * quant_ints_bytes(Q4);
  __m256 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
    const uint8_t* ints = w + b * quant_ints_bytes(Q4);
    const uint8_t* d16 = w + scales + b * quant_scales_bytes;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256 dw =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d16 + 16 * h)));
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const int64_t at = i * x.blocks + b;
        const __m256i isum = block_sum<Q4>(ints, h, x.q + at * block, x.sum[at]);
        const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.d[at]));
        acc[i][h] = _mm256_add_ps(acc[i][h], _mm256_mul_ps(scale, _mm256_cvtepi32_ps(isum)));
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float out[lanes];
    _mm256_storeu_ps(out, acc[i][0]);
    _mm256_storeu_ps(out + 8, acc[i][1]);
    float* dst = y + i * ldy;
    for (int64_t l = 0; l < n; ++l) dst[l] = accumulate ? out[l] + dst[l] : out[l];
  }
}

template <bool Q4>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  const int64_t group_bytes = quant_group_bytes(Q4, x.blocks);
  for (int64_t g = 0; g * lanes < n; ++g) {
    const uint8_t* wg = w + g * group_bytes;
    const int64_t live = at_most(lanes, n - g * lanes);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      const quant_rows_view xi{x.q + i * x.blocks * block, x.d + i * x.blocks,
                               x.sum + i * x.blocks, x.blocks};
      tile<Q4, 2>(xi, wg, live, y + i * ldy + g * lanes, ldy, accumulate);
    }
    if (i < m) {
      const quant_rows_view xi{x.q + i * x.blocks * block, x.d + i * x.blocks,
                               x.sum + i * x.blocks, x.blocks};
      tile<Q4, 1>(xi, wg, live, y + i * ldy + g * lanes, ldy, accumulate);
    }
  }
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

} // namespace kvactor::model::layers::avx2
