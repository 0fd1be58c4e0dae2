// The integer block products (quant_kernels.hpp), AVX2: a group's 16 rows
// are two vectors of 8 lanes. vpmaddubsw multiplies u8 by s8 into 16-bit
// pairs, so Q8_0's integers and IQ4_NL's and IQ4_XS's levels go in as |q|
// beside x carrying q's sign (at most 128 x 127 x 2, no saturation) and the
// other 4- and 5-bit integers as they are.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); built with -ffp-contract=off, as every kernel.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::avx2 {

#include "model/quant/quant_tiles_256.inl"

namespace {

// Per 32-bit lane the sum of its 4 products w x x, both s8 (|w| <= 127):
// |w| times x with w's sign, at most 2 x 127 x 127 a 16-bit pair.
inline __m256i signed_dot4(__m256i w, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w)),
                           _mm256_set1_epi16(1));
}

template <quant_format F>
__m256i block_sum(const uint8_t* q, int h, const int8_t* xq, int32_t xsum) {
  __m256i s = _mm256_setzero_si256();
  if constexpr (has_codebook(F)) {
    // NOTE: the levels signed, as Q8_0's integers below.
    const __m256i table = iq4_table<0>();
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i lo, hi;
      nibbles<4>(q, j, h, lo, hi);
      s = _mm256_add_epi32(s, signed_dot4(_mm256_shuffle_epi8(table, lo), broadcast4(xq + 8 * j)));
      s = _mm256_add_epi32(s,
                           signed_dot4(_mm256_shuffle_epi8(table, hi), broadcast4(xq + 8 * j + 4)));
    }
    return s;
  } else if constexpr (quant_bits(F) != 8) {
    // NOTE: integers below 32: a pair's sum is at most 2 x 31 x 127.
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i lo, hi;
      nibbles<quant_bits(F)>(q, j, h, lo, hi);
      const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, broadcast4(xq + 8 * j)),
                                         _mm256_maddubs_epi16(hi, broadcast4(xq + 8 * j + 4)));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
    }
    return _mm256_sub_epi32(s, _mm256_set1_epi32(quant_offset(F) * xsum));
  } else {
    // NOTE: q + 128 as stored, flipped back to the signed q.
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j)
      s = _mm256_add_epi32(s, signed_dot4(_mm256_xor_si256(load_half(q, j, h), flip),
                                          broadcast4(xq + 4 * j)));
    return s;
  }
}

inline __m256i dot4(__m256i acc, __m256i u, __m256i x) {
  // NOTE: u < 64, so a pair's sum is at most 2 x 63 x 127: no saturation.
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
}

} // namespace

} // namespace kvactor::model::layers::avx2
