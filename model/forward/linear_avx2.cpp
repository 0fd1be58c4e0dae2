// The fixed-order products (linear_kernels.hpp), AVX2 + FMA: a block row of
// 16 outputs is two vectors of 8.
// NOTE: intrinsics only, no std:: or other inline library code: this file is
// built with -mavx2 -mfma, and an inline function emitted here could be
// merged (ODR) into callers on CPUs without them. Everything else has
// internal linkage.
#include <immintrin.h>

#include "model/forward/linear_isa.hpp"

namespace kvactor::model::layers::avx2 {
namespace {

inline __m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// out[0, n) = v (+ out when accumulate), n <= 8
inline void store8(__m256 v, float* out, int64_t n, bool accumulate) {
  if (n >= 8) {
    if (accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(out));
    _mm256_storeu_ps(out, v);
  } else if (n > 0) {
    const __m256i mask = first_lanes(n);
    if (accumulate) v = _mm256_add_ps(v, _mm256_maskload_ps(out, mask));
    _mm256_maskstore_ps(out, mask, v);
  }
}

struct vec {
  using reg = __m256;
  static constexpr int row_regs = 2;
  // acc + loaded rows + the broadcast in 16 registers: 1 row x 3 blocks
  // (6 chains in flight), 2 x 2, 6 x 1
  static constexpr int few_rows_blocks[3] = {0, 3, 2};
  static constexpr int many_rows = 6, many_rows_blocks = 1;

  static reg zero() { return _mm256_setzero_ps(); }
  static reg broadcast(const float* x) { return _mm256_broadcast_ss(x); }
  static reg chain(reg w, reg x, reg acc) { return _mm256_fmadd_ps(w, x, acc); }
  static void load_row(const float* p, reg (&r)[2]) {
    r[0] = _mm256_loadu_ps(p);
    r[1] = _mm256_loadu_ps(p + 8);
  }
  // NOTE: bf16 is the high half of its fp32, so an unpack with zeros widens
  // it exactly. The in-lane unpacks leave outputs 0-3 and 8-11 in r[0],
  // 4-7 and 12-15 in r[1]; store_row puts them back in order.
  static void load_row(const uint16_t* p, reg (&r)[2]) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    r[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), v));
    r[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), v));
  }
  template <class T>
  static void store_row(const reg (&r)[2], float* y, int64_t n, bool accumulate) {
    if constexpr (sizeof(T) == 2) {
      store8(_mm256_permute2f128_ps(r[0], r[1], 0x20), y, n, accumulate);
      store8(_mm256_permute2f128_ps(r[0], r[1], 0x31), y + 8, n - 8, accumulate);
    } else {
      store8(r[0], y, n, accumulate);
      store8(r[1], y + 8, n - 8, accumulate);
    }
  }
};

} // namespace

#include "model/forward/linear_tiles.inl"

} // namespace kvactor::model::layers::avx2
