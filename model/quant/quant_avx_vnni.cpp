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

template <quant_format F>
__m256i block_sum(const uint8_t* q, int h, const int8_t* xq, int32_t xsum) {
  __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
  if constexpr (quant_bits(F) != 8) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m256i lo, hi;
      nibbles<quant_bits(F)>(q, j, h, lo, hi);
      if constexpr (has_codebook(F)) {
        lo = _mm256_shuffle_epi8(iq4_table<128>(), lo);
        hi = _mm256_shuffle_epi8(iq4_table<128>(), hi);
      }
      s0 = _mm256_dpbusd_avx_epi32(s0, lo, broadcast4(xq + 8 * j));
      s1 = _mm256_dpbusd_avx_epi32(s1, hi, broadcast4(xq + 8 * j + 4));
    }
  } else {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      s0 = _mm256_dpbusd_avx_epi32(s0, load_half(q, 2 * j, h), broadcast4(xq + 8 * j));
      s1 = _mm256_dpbusd_avx_epi32(s1, load_half(q, 2 * j + 1, h), broadcast4(xq + 8 * j + 4));
    }
  }
  return _mm256_sub_epi32(_mm256_add_epi32(s0, s1), _mm256_set1_epi32(quant_offset(F) * xsum));
}

inline __m256i dot4(__m256i acc, __m256i u, __m256i x) {
  return _mm256_dpbusd_avx_epi32(acc, u, x);
}

} // namespace

} // namespace kvactor::model::layers::avx_vnni
