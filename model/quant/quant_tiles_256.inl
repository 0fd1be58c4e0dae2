// The integer block products (quant_kernels.hpp) on 256-bit vectors: a
// group's 16 rows are two vectors of 8 lanes; tiles of 1 or 2 rows of x
// against one group. Included by quant_avx2.cpp and quant_avx_vnni.cpp
// inside their namespace; each then defines block_sum, the one step their
// instructions do differently.
// NOTE: intrinsics only (see linear_avx512.cpp); built with
// -ffp-contract=off, as every kernel.

namespace {

constexpr int64_t lanes = 16, block = 32;

inline int64_t at_most(int64_t a, int64_t b) { return a < b ? a : b; }

inline __m256i broadcast4(const int8_t* x) {
  int bits;
  __builtin_memcpy(&bits, x, sizeof bits);
  return _mm256_set1_epi32(bits);
}

// Half h (lanes 8h .. 8h + 7) of vector j of a block's integers.
inline __m256i load_half(const uint8_t* q, int j, int h) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * j + 32 * h));
}

// The sum over one half's block of q_w * q_x, per lane (exact): q_w from
// the block's integers `q` (quantized_matrix layout), q_x the activations'
// block `xq`, whose integers sum to `xsum`.
template <bool Q4>
__m256i block_sum(const uint8_t* q, int h, const int8_t* xq, int32_t xsum);

// R rows of x against one group (n <= 16 outputs of it).
template <bool Q4, int R>
void tile(const quant_rows_view& x, const uint8_t* w, int64_t n, float* y, int64_t ldy,
          bool accumulate) {
  const int64_t scales = x.blocks * quant_ints_bytes(Q4);
  __m256 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < x.blocks; ++b) {
    const uint8_t* ints = w + b * quant_ints_bytes(Q4);
    const uint8_t* d16 = w + scales + b * quant_scales_bytes;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256 dw =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d16 + 16 * h)));
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const int64_t at = i * x.blocks + b;
        const __m256i isum = block_sum<Q4>(ints, h, x.q + at * block, x.sum[at]);
        const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.d[at]));
        acc[i][h] = _mm256_add_ps(acc[i][h], _mm256_mul_ps(scale, _mm256_cvtepi32_ps(isum)));
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float out[lanes];
    _mm256_storeu_ps(out, acc[i][0]);
    _mm256_storeu_ps(out + 8, acc[i][1]);
    float* dst = y + i * ldy;
    for (int64_t l = 0; l < n; ++l) dst[l] = accumulate ? out[l] + dst[l] : out[l];
  }
}

template <bool Q4>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  const int64_t group_bytes = quant_group_bytes(Q4, x.blocks);
  for (int64_t g = 0; g * lanes < n; ++g) {
    const uint8_t* wg = w + g * group_bytes;
    const int64_t live = at_most(lanes, n - g * lanes);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      const quant_rows_view xi{x.q + i * x.blocks * block, x.d + i * x.blocks,
                               x.sum + i * x.blocks, x.blocks};
      tile<Q4, 2>(xi, wg, live, y + i * ldy + g * lanes, ldy, accumulate);
    }
    if (i < m) {
      const quant_rows_view xi{x.q + i * x.blocks * block, x.d + i * x.blocks,
                               x.sum + i * x.blocks, x.blocks};
      tile<Q4, 1>(xi, wg, live, y + i * ldy + g * lanes, ldy, accumulate);
    }
  }
}

} // namespace

void product_q8_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<false>(x, m, w, n, y, ldy, accumulate);
}

void product_q4_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<true>(x, m, w, n, y, ldy, accumulate);
}
