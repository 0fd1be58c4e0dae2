// The integer block products (quant_kernels.hpp), AVX-VNNI (the 256-bit
// vpdpbusd of CPUs without AVX-512): a group's 16 rows are two vectors of 8
// lanes, and one vpdpbusd adds 4 columns' u8 x s8 products to each lane,
// weights unsigned (q + 128, the nibble, or an IQ4 level + 128), minus the
// offset times the activations' block sum.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); built with -ffp-contract=off, as every kernel.
#include <immintrin.h>

#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::avx_vnni {

#include "model/quant/quant_tiles_256.inl"

namespace {

template <quant_format L>
inline void pair_of(const uint8_t* q, int j, int h, __m256i& a, __m256i& b) {
  if constexpr (quant_bits(L) == 8) {
    a = load_half(q, 2 * j, h);
    b = load_half(q, 2 * j + 1, h);
  } else {
    nibbles<quant_bits(L)>(q, j, h, a, b);
    if constexpr (has_codebook(L)) {
      a = _mm256_shuffle_epi8(iq4_table<128>(), a);
      b = _mm256_shuffle_epi8(iq4_table<128>(), b);
    }
  }
}

template <quant_format L>
inline __m256i madd_pair(__m256i acc, __m256i a, __m256i b, const int8_t* x) {
  return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, a, broadcast4(x)), b,
                                 broadcast4(x + 4));
}

// NOTE: every weight goes in unsigned (its u).
template <quant_format F>
constexpr int32_t weight_offset() {
  return quant_offset(F);
}

inline __m256i dot4(__m256i acc, __m256i u, __m256i x) {
  return _mm256_dpbusd_avx_epi32(acc, u, x);
}

} // namespace

} // namespace kvactor::model::layers::avx_vnni
