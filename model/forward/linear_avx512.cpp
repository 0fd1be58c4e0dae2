// The fixed-order products (linear_kernels.hpp), AVX-512: a block row of 16
// outputs is one vector.
// NOTE: intrinsics only, no std:: or other inline library code: this file is
// built with -mavx512*, and an inline function emitted here could be merged
// (ODR) into callers on CPUs without AVX-512. Everything else has internal
// linkage.
#include <immintrin.h>

#include "model/forward/linear_isa.hpp"

namespace kvactor::model::layers::avx512 {
namespace {

struct vec {
  using reg = __m512;
  static constexpr int row_regs = 1;
  // acc + loaded rows + the broadcast in 32 registers: 1 row x 8 blocks
  // (8 chains in flight), 2 x 4, 6 x 4 (24 accumulators)
  static constexpr int few_rows_blocks[3] = {0, 8, 4};
  static constexpr int many_rows = 6, many_rows_blocks = 4;

  static reg zero() { return _mm512_setzero_ps(); }
  static reg broadcast(const float* x) { return _mm512_set1_ps(*x); }
  static reg chain(reg w, reg x, reg acc) { return _mm512_fmadd_ps(w, x, acc); }
  static void load_row(const float* p, reg (&r)[1]) { r[0] = _mm512_loadu_ps(p); }
  // bf16 is the high half of its fp32: widening is exact.
  static void load_row(const uint16_t* p, reg (&r)[1]) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    r[0] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  template <class T>
  static void store_row(const reg (&r)[1], float* y, int64_t n, bool accumulate) {
    const __mmask16 mask =
      n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
    __m512 s = r[0];
    if (accumulate) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, y));
    _mm512_mask_storeu_ps(y, mask, s);
  }
};

} // namespace

#include "model/forward/linear_tiles.inl"

} // namespace kvactor::model::layers::avx512
