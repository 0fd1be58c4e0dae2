#include "model/forward/linear_bf16.hpp"

#include <immintrin.h>

#include <bit>

#include "kernels/assert.hpp"

namespace kvactor::model::layers {

bool has_fused_bf16() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return ok;
}

namespace {

// 16 bf16 -> 16 fp32: zero-extend to 32 bits, shift into the high half.
inline __m512 widen16(const std::uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

inline __m512 widen_tail(const std::uint16_t* p, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// Four rows of W at once (independent FMA chains) against M rows of x.
template <int M>
void rows4(const float* x, std::int64_t ldx, const std::uint16_t* w, std::int64_t k, float beta, float* y,
           std::int64_t ldy, std::int64_t j0, std::int64_t nj) {
  __m512 acc[M][4];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < 4; ++r) acc[i][r] = _mm512_setzero_ps();
  std::int64_t c = 0;
  for (; c + 16 <= k; c += 16) {
    __m512 wv[4];
    for (int r = 0; r < 4; ++r) wv[r] = r < nj ? widen16(w + (j0 + r) * k + c) : _mm512_setzero_ps();
    for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_loadu_ps(x + i * ldx + c);
      for (int r = 0; r < 4; ++r) acc[i][r] = _mm512_fmadd_ps(wv[r], xv, acc[i][r]);
    }
  }
  if (c < k) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (k - c)) - 1u);
    __m512 wv[4];
    for (int r = 0; r < 4; ++r) wv[r] = r < nj ? widen_tail(w + (j0 + r) * k + c, mask) : _mm512_setzero_ps();
    for (int i = 0; i < M; ++i) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + i * ldx + c);
      for (int r = 0; r < 4; ++r) acc[i][r] = _mm512_fmadd_ps(wv[r], xv, acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < nj; ++r) {
      float& out = y[i * ldy + j0 + r];
      const float sum = _mm512_reduce_add_ps(acc[i][r]);
      out = beta == 0.0f ? sum : sum + beta * out;
    }
}

template <int M>
void product(const float* x, std::int64_t ldx, const std::uint16_t* w, std::int64_t n, std::int64_t k, float beta,
             float* y, std::int64_t ldy) {
  for (std::int64_t j = 0; j < n; j += 4) rows4<M>(x, ldx, w, k, beta, y, ldy, j, n - j < 4 ? n - j : 4);
}

} // namespace

void fused_bf16_product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
                        std::int64_t k, float beta, float* y, std::int64_t ldy) {
  switch (m) {
  case 1: product<1>(x, ldx, w, n, k, beta, y, ldy); break;
  case 2: product<2>(x, ldx, w, n, k, beta, y, ldy); break;
  case 3: product<3>(x, ldx, w, n, k, beta, y, ldy); break;
  case 4: product<4>(x, ldx, w, n, k, beta, y, ldy); break;
  default: KVACTOR_ASSERT(false, "fused bf16 product takes 1 to 4 rows");
  }
}

} // namespace kvactor::model::layers
