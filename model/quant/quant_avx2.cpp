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

// Q8_0's integers and IQ4's levels go in signed (signed_dot4).
constexpr bool signed_weights = true;

#include "model/quant/quant_tiles_256.inl"

namespace {

// Per 32-bit lane the sum of its 4 products w x x, both s8 (|w| <= 127):
// |w| times x with w's sign, at most 2 x 127 x 127 a 16-bit pair.
inline __m256i signed_dot4(__m256i w, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w)),
                           _mm256_set1_epi16(1));
}

template <quant_format L>
inline __m256i madd_pair(__m256i acc, __m256i a, __m256i b, const int8_t* x) {
  if constexpr (goes_signed<L>())
    return _mm256_add_epi32(_mm256_add_epi32(acc, signed_dot4(a, broadcast4(x))),
                            signed_dot4(b, broadcast4(x + 4)));
  // NOTE: integers below 32: a pair's sum is at most 2 x 31 x 127, the
  // two pairs' 4 x 31 x 127.
  const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(a, broadcast4(x)),
                                     _mm256_maddubs_epi16(b, broadcast4(x + 4)));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

inline __m256i dot4(__m256i acc, __m256i u, __m256i x) {
  // NOTE: u < 64, so a pair's sum is at most 2 x 63 x 127: no saturation.
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
}

} // namespace

} // namespace kvactor::model::layers::avx2
