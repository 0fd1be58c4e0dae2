// The sampler's row passes on AVX-512 F (row_ops.hpp): 16 floats a step,
// the row's tail through masked loads.
#include "model/sampling/row_ops_isa.hpp"

#include <immintrin.h>

#include <limits>

namespace kvactor::model::sampling::avx512 {

namespace {

constexpr int64_t lanes = 16;
constexpr int unroll = 4; // independent accumulators in the reductions

__mmask16 tail_mask(int64_t remaining) {
  return remaining >= lanes ? __mmask16(0xffff) : __mmask16((1u << remaining) - 1);
}

// exp(x) for x <= 0 (row_ops.hpp's exp_poly); 0 for NaN, -inf and below min_arg.
__m512 exp_nonpositive(__m512 x) {
  namespace e = exp_poly;
  const __mmask16 valid = _mm512_cmp_ps_mask(x, _mm512_set1_ps(e::min_arg), _CMP_GE_OQ);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(e::log2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(e::ln2_hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(e::ln2_lo), r);
  __m512 p = _mm512_set1_ps(e::c[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(e::c[i]));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_mov_ps(valid, _mm512_scalef_ps(p, n));
}

__m512i lane_ids() {
  return _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

} // namespace

float max(const float* x, int64_t n) {
  // NOTE: four running maxima, so that no step waits for the one before;
  // max_ps returns its second operand when either is NaN, so a NaN logit
  // never replaces a running maximum.
  __m512 m[unroll];
  for (__m512& v : m)
    v = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + unroll * lanes <= n; i += unroll * lanes)
    for (int u = 0; u < unroll; ++u)
      m[u] = _mm512_max_ps(_mm512_loadu_ps(x + i + u * lanes), m[u]);
  for (; i < n; i += lanes) {
    const __mmask16 k = tail_mask(n - i);
    m[0] = _mm512_mask_max_ps(m[0], k, _mm512_maskz_loadu_ps(k, x + i), m[0]);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
}

float weights(const float* x, int64_t n, float max_x, float scale, float* w, float* block_sums) {
  const __m512 mx = _mm512_set1_ps(max_x), s = _mm512_set1_ps(scale);
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m512 sum = _mm512_setzero_ps();
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (int64_t i = b * row_block; i < end; i += lanes) {
      const __mmask16 k = tail_mask(end - i);
      const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
      const __m512 e =
        _mm512_maskz_mov_ps(k, exp_nonpositive(_mm512_mul_ps(_mm512_sub_ps(v, mx), s)));
      _mm512_mask_storeu_ps(w + i, k, e);
      sum = _mm512_add_ps(sum, e);
    }
    block_sums[b] = _mm512_reduce_add_ps(sum);
    total += block_sums[b];
  }
  return total;
}

double sum_exp(const float* x, int64_t n, float max_x) {
  const __m512 mx = _mm512_set1_ps(max_x);
  double total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m512 sum = _mm512_setzero_ps();
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (int64_t i = b * row_block; i < end; i += lanes) {
      const __mmask16 k = tail_mask(end - i);
      const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
      sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, exp_nonpositive(_mm512_sub_ps(v, mx))));
    }
    total += _mm512_reduce_add_ps(sum);
  }
  return total;
}

row_measure at_least(const float* w, int64_t n, float at) {
  // NOTE: each block sums in float, the blocks in double.
  const __m512 a = _mm512_set1_ps(at);
  row_measure m;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m512 mass[unroll];
    for (__m512& v : mass)
      v = _mm512_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + unroll * lanes <= end; i += unroll * lanes)
      for (int u = 0; u < unroll; ++u) {
        const __m512 v = _mm512_loadu_ps(w + i + u * lanes);
        const __mmask16 in = _mm512_cmp_ps_mask(v, a, _CMP_GE_OQ);
        mass[u] = _mm512_mask_add_ps(mass[u], in, mass[u], v);
        m.count += __builtin_popcount(in);
      }
    for (; i < end; i += lanes) {
      const __mmask16 k = tail_mask(end - i);
      const __m512 v = _mm512_maskz_loadu_ps(k, w + i);
      const __mmask16 in = _mm512_mask_cmp_ps_mask(k, v, a, _CMP_GE_OQ);
      mass[0] = _mm512_mask_add_ps(mass[0], in, mass[0], v);
      m.count += __builtin_popcount(in);
    }
    m.mass += _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(mass[0], mass[1]), _mm512_add_ps(mass[2], mass[3])));
  }
  return m;
}

float kept_sums(const float* w, int64_t n, row_cut cut, float* block_sums) {
  const __m512 cw = _mm512_set1_ps(cut.w);
  const __m512i cid = _mm512_set1_epi32(cut.id), ids = lane_ids();
  // The mask of the lanes at or above the cut.
  const auto kept = [&](__m512 v, int64_t i, __mmask16 k) {
    const __m512i id = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(i)), ids);
    return __mmask16(
      _mm512_mask_cmp_ps_mask(k, v, cw, _CMP_GT_OQ) |
      (_mm512_mask_cmp_ps_mask(k, v, cw, _CMP_EQ_OQ) & _mm512_cmple_epi32_mask(id, cid)));
  };
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m512 sum[unroll];
    for (__m512& v : sum)
      v = _mm512_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + unroll * lanes <= end; i += unroll * lanes)
      for (int u = 0; u < unroll; ++u) {
        const int64_t at = i + u * lanes;
        const __m512 v = _mm512_loadu_ps(w + at);
        sum[u] = _mm512_mask_add_ps(sum[u], kept(v, at, 0xffff), sum[u], v);
      }
    for (; i < end; i += lanes) {
      const __mmask16 k = tail_mask(end - i);
      const __m512 v = _mm512_maskz_loadu_ps(k, w + i);
      sum[0] = _mm512_mask_add_ps(sum[0], kept(v, i, k), sum[0], v);
    }
    block_sums[b] = _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(sum[0], sum[1]), _mm512_add_ps(sum[2], sum[3])));
    total += block_sums[b];
  }
  return total;
}

int64_t next_at_least(const float* x, int64_t from, int64_t n, float at) {
  const __m512 a = _mm512_set1_ps(at);
  for (int64_t i = from; i < n; i += lanes) {
    const __mmask16 k = tail_mask(n - i);
    const __mmask16 hit =
      _mm512_mask_cmp_ps_mask(k, _mm512_maskz_loadu_ps(k, x + i), a, _CMP_GE_OQ);
    if (hit)
      return i + __builtin_ctz(hit);
  }
  return n;
}

int64_t next_in(const float* x, int64_t from, int64_t n, float lo, float hi) {
  const __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  for (int64_t i = from; i < n; i += lanes) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    const __mmask16 hit =
      _mm512_mask_cmp_ps_mask(_mm512_mask_cmp_ps_mask(k, v, l, _CMP_GE_OQ), v, h, _CMP_LT_OQ);
    if (hit)
      return i + __builtin_ctz(hit);
  }
  return n;
}

int64_t gather(const float* w, int64_t n, float lo, float hi, float* out_w, int32_t* out_id) {
  const __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  const __m512i ids = lane_ids();
  int64_t count = 0;
  for (int64_t i = 0; i < n; i += lanes) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(k, w + i);
    const __mmask16 in =
      _mm512_mask_cmp_ps_mask(_mm512_mask_cmp_ps_mask(k, v, l, _CMP_GE_OQ), v, h, _CMP_LT_OQ);
    if (!in)
      continue;
    const __m512i id = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(i)), ids);
    // NOTE: compressed in a register and stored whole (the buffers have a
    // vector's slack): a compressing store to memory is slow on some CPUs.
    _mm512_storeu_ps(out_w + count, _mm512_maskz_compress_ps(in, v));
    _mm512_storeu_si512(out_id + count, _mm512_maskz_compress_epi32(in, id));
    count += __builtin_popcount(in);
  }
  return count;
}

} // namespace kvactor::model::sampling::avx512
