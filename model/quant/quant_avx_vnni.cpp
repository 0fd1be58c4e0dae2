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

// Every weight goes in unsigned, as its u.
constexpr bool signed_weights = false;

#include "model/quant/quant_tiles_256.inl"

namespace {

template <quant_format L>
inline __m256i madd_pair(__m256i acc, __m256i a, __m256i b, const int8_t* x) {
  return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, a, broadcast4(x)), b,
                                 broadcast4(x + 4));
}

inline __m256i dot4(__m256i acc, __m256i u, __m256i x) {
  return _mm256_dpbusd_avx_epi32(acc, u, x);
}

} // namespace

} // namespace kvactor::model::layers::avx_vnni
