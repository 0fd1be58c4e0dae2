// The fixed-order products of linear_kernels.hpp, AVX-512: 16 outputs per vector.
// NOTE: intrinsics only, no std:: or other inline library code: this file is
// built with -mavx512*, and an inline function emitted here could be merged
// (ODR) into callers on CPUs without AVX-512. Everything else has internal
// linkage.
#include "model/forward/linear_isa.hpp"

#include <immintrin.h>

namespace kvactor::model::layers::avx512 {
namespace {

inline std::int64_t at_most(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

inline __mmask16 first_lanes(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

// 16 elements of a row of W (the lanes of `mask`, zeros elsewhere) as fp32.
inline __m512 load16(const float* p, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, p); }
inline __m512 load16(const std::uint16_t* p, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));  // exact
}

// r[i] = row i (16 floats) -> r[c] = column c.
inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // r[4a + b], 128-bit lane q: rows 4a .. 4a+3 of column 4q + b
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // per b: a 4x4 transpose of 128-bit lanes among r[b], r[4 + b], r[8 + b],
  // r[12 + b] (three-operand shuffles: no copies, no index registers)
  for (int b = 0; b < 4; ++b) {
    const __m512 u0 = _mm512_shuffle_f32x4(r[b], r[4 + b], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 u1 = _mm512_shuffle_f32x4(r[b], r[4 + b], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 u2 = _mm512_shuffle_f32x4(r[8 + b], r[12 + b], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 u3 = _mm512_shuffle_f32x4(r[8 + b], r[12 + b], _MM_SHUFFLE(3, 2, 3, 2));
    t[b] = _mm512_shuffle_f32x4(u0, u2, _MM_SHUFFLE(2, 0, 2, 0));       // column b
    t[4 + b] = _mm512_shuffle_f32x4(u0, u2, _MM_SHUFFLE(3, 1, 3, 1));   // column 4 + b
    t[8 + b] = _mm512_shuffle_f32x4(u1, u3, _MM_SHUFFLE(2, 0, 2, 0));   // column 8 + b
    t[12 + b] = _mm512_shuffle_f32x4(u1, u3, _MM_SHUFFLE(3, 1, 3, 1));  // column 12 + b
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// r[t] = W[t, c .. c+16) for t < rows (zeros past rows and past the mask).
template <class T>
inline void load_block(const T* w, std::int64_t k, std::int64_t rows, std::int64_t c, __mmask16 mask, __m512* r) {
  if (rows == 16) {
#pragma GCC unroll 16
    for (int t = 0; t < 16; ++t) r[t] = load16(w + t * k + c, mask);
    return;
  }
  for (int t = 0; t < 16; ++t) r[t] = t < rows ? load16(w + t * k + c, mask) : _mm512_setzero_ps();
}

// y[i, 0 .. nj) (16 outputs per vector of acc, lanes past nj dropped).
template <int M, int V>
inline void store_rows(const __m512 (&acc)[M][V], float* y, std::int64_t ldy, std::int64_t nj, bool accumulate) {
  for (int i = 0; i < M; ++i)
    for (int v = 0; v < V; ++v) {
      if (nj <= 16 * v) break;
      const __mmask16 mask = first_lanes(nj - 16 * v);
      float* out = y + i * ldy + 16 * v;
      __m512 s = acc[i][v];
      if (accumulate) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, out));
      _mm512_mask_storeu_ps(out, mask, s);
    }
}

// M rows of x against B blocks of 16 rows of W (nj <= 16 B of them), W
// transposed in registers 16 columns of k at a time.
template <int M, int B, class T>
void small_tile(const float* x, std::int64_t ldx, const T* w, std::int64_t k, std::int64_t nj, float* y,
                std::int64_t ldy, bool accumulate) {
  __m512 acc[M][B];
  for (int i = 0; i < M; ++i)
    for (int b = 0; b < B; ++b) acc[i][b] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < k; c += 16) {
    const std::int64_t kn = at_most(16, k - c);
    const __mmask16 mask = first_lanes(kn);
#pragma GCC unroll 4
    for (int b = 0; b < B; ++b) {
      const std::int64_t rows = at_most(16, nj - 16 * b);
      if (rows <= 0) break;
      __m512 r[16];
      load_block(w + 16 * b * k, k, rows, c, mask, r);
      transpose16(r);  // r[t]: W[16 b + lane, c + t]
      if (kn == 16) {
#pragma GCC unroll 16
        for (int t = 0; t < 16; ++t)
#pragma GCC unroll 8
          for (int i = 0; i < M; ++i) acc[i][b] = _mm512_fmadd_ps(r[t], _mm512_set1_ps(x[i * ldx + c + t]), acc[i][b]);
      } else {
        for (int t = 0; t < kn; ++t)
#pragma GCC unroll 8
          for (int i = 0; i < M; ++i) acc[i][b] = _mm512_fmadd_ps(r[t], _mm512_set1_ps(x[i * ldx + c + t]), acc[i][b]);
      }
    }
  }
  store_rows<M, B>(acc, y, ldy, nj, accumulate);
}

template <int M, class T>
void small_product(const float* x, std::int64_t ldx, const T* w, std::int64_t n, std::int64_t k, float* y,
                   std::int64_t ldy, bool accumulate) {
  // NOTE: one row of x has one FMA chain per block: two blocks keep two
  // chains in flight.
  constexpr int B = M <= 2 ? 2 : 1;
  for (std::int64_t j = 0; j < n; j += 16 * B)
    small_tile<M, B>(x, ldx, w + j * k, k, at_most(16 * B, n - j), y + j, ldy, accumulate);
}

constexpr int panel_vectors = static_cast<int>(fixed_order_panel_rows / 16);

// panel[c, 16 v + lane] = W[16 v + lane, c] for the nj rows of W; zeros past them.
template <class T>
void pack_panel(const T* w, std::int64_t k, std::int64_t nj, float* panel) {
  for (int v = 0; v < panel_vectors; ++v) {
    const std::int64_t rows = nj - 16 * v;
    for (std::int64_t c = 0; c < k; c += 16) {
      const std::int64_t kn = at_most(16, k - c);
      __m512 r[16];
      if (rows > 0) {
        load_block(w + 16 * v * k, k, at_most(16, rows), c, first_lanes(kn), r);
        transpose16(r);
      } else {
        for (int t = 0; t < 16; ++t) r[t] = _mm512_setzero_ps();
      }
      for (int t = 0; t < kn; ++t) _mm512_storeu_ps(panel + (c + t) * fixed_order_panel_rows + 16 * v, r[t]);
    }
  }
}

// R rows of x against a packed panel.
template <int R>
void panel_tile(const float* x, std::int64_t ldx, const float* panel, std::int64_t k, std::int64_t nj, float* y,
                std::int64_t ldy, bool accumulate) {
  __m512 acc[R][panel_vectors];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < panel_vectors; ++v) acc[i][v] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < k; ++c) {
    __m512 wv[panel_vectors];
#pragma GCC unroll 4
    for (int v = 0; v < panel_vectors; ++v) wv[v] = _mm512_loadu_ps(panel + c * fixed_order_panel_rows + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512 xb = _mm512_set1_ps(x[i * ldx + c]);
#pragma GCC unroll 4
      for (int v = 0; v < panel_vectors; ++v) acc[i][v] = _mm512_fmadd_ps(wv[v], xb, acc[i][v]);
    }
  }
  store_rows<R, panel_vectors>(acc, y, ldy, nj, accumulate);
}

template <class T>
void product(const float* x, std::int64_t ldx, std::int64_t m, const T* w, std::int64_t n, std::int64_t k, float* y,
             std::int64_t ldy, bool accumulate, float* scratch) {
  switch (m) {
  case 1: small_product<1>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 2: small_product<2>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 3: small_product<3>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 4: small_product<4>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 5: small_product<5>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 6: small_product<6>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 7: small_product<7>(x, ldx, w, n, k, y, ldy, accumulate); return;
  case 8: small_product<8>(x, ldx, w, n, k, y, ldy, accumulate); return;
  default: break;
  }
  static_assert(fixed_order_small_rows == 8, "the cases above");
  constexpr int R = 6;
  for (std::int64_t j = 0; j < n; j += fixed_order_panel_rows) {
    const std::int64_t nj = at_most(fixed_order_panel_rows, n - j);
    pack_panel(w + j * k, k, nj, scratch);
    std::int64_t i = 0;
    for (; i + R <= m; i += R) panel_tile<R>(x + i * ldx, ldx, scratch, k, nj, y + i * ldy + j, ldy, accumulate);
    float* yi = y + i * ldy + j;
    const float* xi = x + i * ldx;
    switch (m - i) {
    case 1: panel_tile<1>(xi, ldx, scratch, k, nj, yi, ldy, accumulate); break;
    case 2: panel_tile<2>(xi, ldx, scratch, k, nj, yi, ldy, accumulate); break;
    case 3: panel_tile<3>(xi, ldx, scratch, k, nj, yi, ldy, accumulate); break;
    case 4: panel_tile<4>(xi, ldx, scratch, k, nj, yi, ldy, accumulate); break;
    case 5: panel_tile<5>(xi, ldx, scratch, k, nj, yi, ldy, accumulate); break;
    default: break;
    }
  }
}

} // namespace

void product(const float* x, std::int64_t ldx, std::int64_t m, const float* w, std::int64_t n, std::int64_t k,
             float* y, std::int64_t ldy, bool accumulate, float* scratch) {
  product<float>(x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
}

void product(const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w, std::int64_t n,
             std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch) {
  product<std::uint16_t>(x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
}

} // namespace kvactor::model::layers::avx512
