// The bf16 pair products (pair_kernels.hpp), AVX512_BF16: a pair row of a
// block (16 outputs x 2 columns) is one vector, and one vdpbf16ps adds both
// products of a pair to each of the 16 chains.
// NOTE: intrinsics only, no std:: or other inline library code (see
// linear_avx512.cpp); everything else has internal linkage.
#include <immintrin.h>

#include "model/forward/pair_isa.hpp"

namespace kvactor::model::layers::avx512_bf16 {
namespace {

constexpr int64_t block_rows = 16;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

// x's pair p of one row, in every lane.
inline __m512bh broadcast_pair(const uint16_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return (__m512bh)_mm512_set1_epi32(bits);
}

// R rows of x against NB consecutive blocks (n <= 16 NB outputs of them).
template <int R, int NB>
void tile(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t k, int64_t n, float* y,
          int64_t ldy, bool accumulate) {
  __m512 acc[R][NB];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k / 2; ++p) {
    __m512bh wv[NB];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j)
      wv[j] = (__m512bh)_mm512_loadu_si512(w + (j * k + 2 * p) * block_rows);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512bh xb = broadcast_pair(x + i * ldx + 2 * p);
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], wv[j], xb);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) {
      if (n <= block_rows * j) break;
      const int64_t left = n - block_rows * j;
      const __mmask16 mask =
        left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
      float* out = y + i * ldy + block_rows * j;
      __m512 s = acc[i][j];
      if (accumulate) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, out));
      _mm512_mask_storeu_ps(out, mask, s);
    }
}

template <int R, int NB>
void tail_rows(int64_t rows, const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t k,
               int64_t n, float* y, int64_t ldy, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R) tile<R, NB>(x, ldx, w, k, n, y, ldy, accumulate);
    else tail_rows<R - 1, NB>(rows, x, ldx, w, k, n, y, ldy, accumulate);
  }
}

// All m rows against NB blocks: tiles of R rows, then the rest, while the
// blocks stay in cache.
template <int R, int NB>
void group(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k,
           int64_t n, float* y, int64_t ldy, bool accumulate) {
  int64_t i = 0;
  for (; i + R <= m; i += R) tile<R, NB>(x + i * ldx, ldx, w, k, n, y + i * ldy, ldy, accumulate);
  tail_rows<R - 1, NB>(m - i, x + i * ldx, ldx, w, k, n, y + i * ldy, ldy, accumulate);
}

// Every block, NB at a time, then the rest one by one.
template <int R, int NB>
void sweep(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k,
           int64_t n, float* y, int64_t ldy, bool accumulate) {
  const int64_t num_blocks = (n + block_rows - 1) / block_rows;
  int64_t b = 0;
  for (; b + NB <= num_blocks; b += NB)
    group<R, NB>(x, ldx, m, w + b * block_rows * k, k, at_most(block_rows * NB, n - block_rows * b),
                 y + block_rows * b, ldy, accumulate);
  for (; b < num_blocks; ++b)
    group<R, 1>(x, ldx, m, w + b * block_rows * k, k, at_most(block_rows, n - block_rows * b),
                y + block_rows * b, ldy, accumulate);
}

} // namespace

void product(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k,
             int64_t n, float* y, int64_t ldy, bool accumulate) {
  // NOTE: accumulators + loaded pair rows + the broadcast in 32 registers:
  // 1 row x 8 blocks (8 chains in flight), 2 x 4, 6 x 4.
  if (m == 1) return sweep<1, 8>(x, ldx, m, w, k, n, y, ldy, accumulate);
  if (m == 2) return sweep<2, 4>(x, ldx, m, w, k, n, y, ldy, accumulate);
  sweep<6, 4>(x, ldx, m, w, k, n, y, ldy, accumulate);
}

} // namespace kvactor::model::layers::avx512_bf16
