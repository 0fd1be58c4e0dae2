// The fixed-order products of linear_kernels.hpp, AVX2 + FMA: 8 outputs per
// vector, the same fma chain per output as the AVX-512 kernel, so the same
// bits.
// NOTE: intrinsics only, no std:: or other inline library code: this file is
// built with -mavx2 -mfma, and an inline function emitted here could be
// merged (ODR) into callers on CPUs without them. Everything else has
// internal linkage.
#include "model/forward/linear_isa.hpp"

#include <immintrin.h>

namespace kvactor::model::layers::avx2 {
namespace {

inline std::int64_t at_most(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// fp32 bits: low in the low 128-bit lane, high in the high one.
inline __m256 join(__m128i low, __m128i high) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_castsi128_ps(low)), _mm_castsi128_ps(high), 1);
}

// Four columns of 8 rows of W, transposed: q[t] = W[lane, t] (lane = row,
// rows k apart from w), as fp32.
inline void load_quad(const float* w, std::int64_t k, __m256 (&q)[4]) {
  // a[j]: row j in the low lane, row j + 4 in the high lane
  __m256 a[4];
  for (int j = 0; j < 4; ++j)
    a[j] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w + j * k)), _mm_loadu_ps(w + (j + 4) * k), 1);
  // the 4x4 transpose inside each lane
  const __m256 t0 = _mm256_unpacklo_ps(a[0], a[1]), t1 = _mm256_unpackhi_ps(a[0], a[1]);
  const __m256 t2 = _mm256_unpacklo_ps(a[2], a[3]), t3 = _mm256_unpackhi_ps(a[2], a[3]);
  q[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  q[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  q[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  q[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

// The same from bf16 bits: transposed as 16-bit values, then widened
// exactly (a bf16 is the high half of its fp32).
inline void load_quad(const std::uint16_t* w, std::int64_t k, __m256 (&q)[4]) {
  // r[j]: row j's 4 values, then row j + 4's
  __m128i r[4];
  for (int j = 0; j < 4; ++j) {
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + j * k));
    r[j] = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(lo), reinterpret_cast<const double*>(w + (j + 4) * k)));
  }
  // u0: rows 0, 1 interleaved by column; u1: rows 4, 5; u2: rows 2, 3; u3: rows 6, 7
  const __m128i u0 = _mm_unpacklo_epi16(r[0], r[1]), u1 = _mm_unpackhi_epi16(r[0], r[1]);
  const __m128i u2 = _mm_unpacklo_epi16(r[2], r[3]), u3 = _mm_unpackhi_epi16(r[2], r[3]);
  // v: rows 0 .. 3 of columns 0, 1 (v0) or 2, 3 (v1); h: rows 4 .. 7
  const __m128i v0 = _mm_unpacklo_epi32(u0, u2), v1 = _mm_unpackhi_epi32(u0, u2);
  const __m128i h0 = _mm_unpacklo_epi32(u1, u3), h1 = _mm_unpackhi_epi32(u1, u3);
  const __m128i z = _mm_setzero_si128();
  q[0] = join(_mm_unpacklo_epi16(z, v0), _mm_unpacklo_epi16(z, h0));
  q[1] = join(_mm_unpackhi_epi16(z, v0), _mm_unpackhi_epi16(z, h0));
  q[2] = join(_mm_unpacklo_epi16(z, v1), _mm_unpacklo_epi16(z, h1));
  q[3] = join(_mm_unpackhi_epi16(z, v1), _mm_unpackhi_epi16(z, h1));
}

// Rows [0, rows) of W at columns [c, c + kn) as an 8x8 fp32 tile, zeros past
// them (the blocks and chunks at the edges of W).
template <class T>
inline void copy_tile(const T* w, std::int64_t k, std::int64_t rows, std::int64_t c, std::int64_t kn,
                      float (&tile)[8][8]) {
  for (int r = 0; r < 8; ++r)
    for (int t = 0; t < 8; ++t) {
      float v = 0.0f;
      if (r < rows && t < kn) {
        if constexpr (sizeof(T) == 4) v = w[r * k + c + t];
        else v = _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(w[r * k + c + t]) << 16)));
      }
      tile[r][t] = v;
    }
}

// Four columns of k (x's columns c .. c + 4) against B full blocks of W:
// acc[i][b] = fma(W[8 b + lane, c + t], x[i, c + t], acc[i][b]) for t = 0 .. 3
// in turn. The B chains of a row interleave, so their fmas overlap.
template <int M, int B, class T>
inline void fma_quads(const T* w, std::int64_t k, const float* x, std::int64_t ldx, __m256 (&acc)[M][B]) {
  __m256 q[B][4];
#pragma GCC unroll 4
  for (int b = 0; b < B; ++b) load_quad(w + 8 * b * k, k, q[b]);
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t)
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      const __m256 xb = _mm256_set1_ps(x[i * ldx + t]);
#pragma GCC unroll 4
      for (int b = 0; b < B; ++b) acc[i][b] = _mm256_fmadd_ps(q[b][t], xb, acc[i][b]);
    }
}

inline __m256i first_lanes(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// y[i, 0 .. nj) (8 outputs per vector of acc, lanes past nj dropped).
template <int M, int V>
inline void store_rows(const __m256 (&acc)[M][V], float* y, std::int64_t ldy, std::int64_t nj, bool accumulate) {
  for (int i = 0; i < M; ++i)
    for (int v = 0; v < V; ++v) {
      if (nj <= 8 * v) break;
      float* out = y + i * ldy + 8 * v;
      __m256 s = acc[i][v];
      if (nj >= 8 * (v + 1)) {
        if (accumulate) s = _mm256_add_ps(s, _mm256_loadu_ps(out));
        _mm256_storeu_ps(out, s);
      } else {
        const __m256i mask = first_lanes(nj - 8 * v);
        if (accumulate) s = _mm256_add_ps(s, _mm256_maskload_ps(out, mask));
        _mm256_maskstore_ps(out, mask, s);
      }
    }
}

// M rows of x against B blocks of 8 rows of W (nj <= 8 B of them), W
// transposed in registers 8 columns of k at a time.
template <int M, int B, class T>
void small_tile(const float* x, std::int64_t ldx, const T* w, std::int64_t k, std::int64_t nj, float* y,
                std::int64_t ldy, bool accumulate) {
  __m256 acc[M][B];
  for (int i = 0; i < M; ++i)
    for (int b = 0; b < B; ++b) acc[i][b] = _mm256_setzero_ps();
  std::int64_t c = 0;
  if (nj == 8 * B) {
    // NOTE: the tile's rows are one contiguous region read in 8B streams;
    // prefetching the next tile's region in order, a share per chunk,
    // keeps memory busy where the hardware prefetchers lose the streams.
    const char* next = reinterpret_cast<const char*>(w + 8 * B * k);
    constexpr int lines_per_chunk = B * static_cast<int>(sizeof(T));  // (8 B rows x 8 columns) / 64 bytes
    for (; c + 8 <= k; c += 8) {
#pragma GCC unroll 8
      for (int l = 0; l < lines_per_chunk; ++l) _mm_prefetch(next + (c / 8 * lines_per_chunk + l) * 64, _MM_HINT_T0);
      fma_quads<M, B>(w + c, k, x + c, ldx, acc);
      fma_quads<M, B>(w + c + 4, k, x + c + 4, ldx, acc);
    }
  }
  // The edges: a partial block or a tail of k, through a copy.
  for (; c < k; c += 8) {
    const std::int64_t kn = at_most(8, k - c);
    for (int b = 0; b < B; ++b) {
      const std::int64_t rows = at_most(8, nj - 8 * b);
      if (rows <= 0) break;
      float tile[8][8];
      copy_tile(w + 8 * b * k, k, rows, c, kn, tile);
      // NOTE: a chain stops at kn: x has no column past it.
      for (int t = 0; t < kn; ++t) {
        const __m256 col = _mm256_setr_ps(tile[0][t], tile[1][t], tile[2][t], tile[3][t], tile[4][t], tile[5][t],
                                          tile[6][t], tile[7][t]);
        for (int i = 0; i < M; ++i) acc[i][b] = _mm256_fmadd_ps(col, _mm256_set1_ps(x[i * ldx + c + t]), acc[i][b]);
      }
    }
  }
  store_rows<M, B>(acc, y, ldy, nj, accumulate);
}

template <int M, class T>
void small_product(const float* x, std::int64_t ldx, const T* w, std::int64_t n, std::int64_t k, float* y,
                   std::int64_t ldy, bool accumulate) {
  // NOTE: one row of x has one FMA chain per block; the blocks of a tile
  // keep B chains in flight.
  constexpr int B = M == 1 ? 2 : M <= 4 ? 2 : 1;
  for (std::int64_t j = 0; j < n; j += 8 * B)
    small_tile<M, B>(x, ldx, w + j * k, k, at_most(8 * B, n - j), y + j, ldy, accumulate);
}

// Rows of W per packed panel, and vectors of 8 per row of the panel.
constexpr std::int64_t panel_rows = 16;
constexpr int panel_vectors = static_cast<int>(panel_rows / 8);

// panel[c, 8 v + lane] = W[8 v + lane, c] for the nj rows of W; zeros past them.
template <class T>
void pack_panel(const T* w, std::int64_t k, std::int64_t nj, float* panel) {
  for (int v = 0; v < panel_vectors; ++v) {
    const std::int64_t rows = at_most(8, nj - 8 * v);
    const T* wv = w + 8 * v * k;
    float* out = panel + 8 * v;
    for (std::int64_t c = 0; c < k; c += 8) {
      const std::int64_t kn = at_most(8, k - c);
      if (rows == 8 && kn == 8) {
        for (int h = 0; h < 8; h += 4) {
          __m256 q[4];
          load_quad(wv + c + h, k, q);
          for (int t = 0; t < 4; ++t) _mm256_storeu_ps(out + (c + h + t) * panel_rows, q[t]);
        }
        continue;
      }
      float tile[8][8];
      copy_tile(wv, k, rows > 0 ? rows : 0, c, kn, tile);
      for (int t = 0; t < kn; ++t)
        for (int r = 0; r < 8; ++r) out[(c + t) * panel_rows + r] = tile[r][t];
    }
  }
}

// R rows of x against a packed panel.
template <int R>
void panel_tile(const float* x, std::int64_t ldx, const float* panel, std::int64_t k, std::int64_t nj, float* y,
                std::int64_t ldy, bool accumulate) {
  __m256 acc[R][panel_vectors];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < panel_vectors; ++v) acc[i][v] = _mm256_setzero_ps();
  for (std::int64_t c = 0; c < k; ++c) {
    __m256 wv[panel_vectors];
    for (int v = 0; v < panel_vectors; ++v) wv[v] = _mm256_loadu_ps(panel + c * panel_rows + 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 xb = _mm256_set1_ps(x[i * ldx + c]);
      for (int v = 0; v < panel_vectors; ++v) acc[i][v] = _mm256_fmadd_ps(wv[v], xb, acc[i][v]);
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
  static_assert(panel_rows <= fixed_order_panel_rows, "the scratch holds the panel");
  constexpr int R = 6;
  for (std::int64_t j = 0; j < n; j += panel_rows) {
    const std::int64_t nj = at_most(panel_rows, n - j);
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

} // namespace kvactor::model::layers::avx2
