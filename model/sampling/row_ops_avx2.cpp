// The sampler's row passes on AVX2 and FMA (row_ops.hpp): 8 floats a step,
// the row's tail element by element.
#include "model/sampling/row_ops_isa.hpp"

#include <immintrin.h>

#include <bit>
#include <limits>

namespace kvactor::model::sampling::avx2 {

namespace {

constexpr int64_t lanes = 8;
constexpr int unroll = 4; // independent accumulators in the reductions

// exp(x) for x <= 0 (row_ops.hpp's exp_poly); 0 for NaN, -inf and below min_arg.
__m256 exp_nonpositive(__m256 x) {
  namespace e = exp_poly;
  const __m256 valid = _mm256_cmp_ps(x, _mm256_set1_ps(e::min_arg), _CMP_GE_OQ);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(e::log2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(e::ln2_hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(e::ln2_lo), r);
  __m256 p = _mm256_set1_ps(e::c[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(e::c[i]));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // NOTE: valid arguments give n in [-126, 0]: 2^n is a normal float whose
  // exponent field is n + 127. Invalid lanes are masked off after.
  const __m256i bits = _mm256_slli_epi32(
    _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_and_ps(n, valid)), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), valid);
}

float exp_nonpositive(float x) {
  alignas(32) float v[lanes] = {x};
  _mm256_store_ps(v, exp_nonpositive(_mm256_load_ps(v)));
  return v[0];
}

float sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}

__m256 sum4(const __m256 (&v)[unroll]) {
  return _mm256_add_ps(_mm256_add_ps(v[0], v[1]), _mm256_add_ps(v[2], v[3]));
}

bool at_or_above(float w, int64_t i, row_cut cut) {
  return w > cut.w || (w == cut.w && i <= cut.id);
}

} // namespace

float max(const float* x, int64_t n) {
  // NOTE: max_ps returns its second operand when either is NaN, so a NaN
  // logit never replaces a running maximum.
  __m256 m[unroll];
  for (__m256& v : m)
    v = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + unroll * lanes <= n; i += unroll * lanes)
    for (int u = 0; u < unroll; ++u)
      m[u] = _mm256_max_ps(_mm256_loadu_ps(x + i + u * lanes), m[u]);
  alignas(32) float out[lanes];
  _mm256_store_ps(out, _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
  float best = -std::numeric_limits<float>::infinity();
  for (float v : out)
    best = v > best ? v : best;
  for (; i < n; ++i)
    best = x[i] > best ? x[i] : best;
  return best;
}

float weights(const float* x, int64_t n, float max_x, float scale, float* w, float* block_sums) {
  const __m256 mx = _mm256_set1_ps(max_x), s = _mm256_set1_ps(scale);
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m256 sum = _mm256_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + lanes <= end; i += lanes) {
      const __m256 e = exp_nonpositive(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mx), s));
      _mm256_storeu_ps(w + i, e);
      sum = _mm256_add_ps(sum, e);
    }
    float block = sum8(sum);
    for (; i < end; ++i) {
      w[i] = exp_nonpositive((x[i] - max_x) * scale);
      block += w[i];
    }
    block_sums[b] = block;
    total += block;
  }
  return total;
}

double sum_exp(const float* x, int64_t n, float max_x) {
  const __m256 mx = _mm256_set1_ps(max_x);
  double total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m256 sum = _mm256_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + lanes <= end; i += lanes)
      sum = _mm256_add_ps(sum, exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), mx)));
    float block = sum8(sum);
    for (; i < end; ++i)
      block += exp_nonpositive(x[i] - max_x);
    total += block;
  }
  return total;
}

row_measure at_least(const float* w, int64_t n, float at) {
  // NOTE: each block sums in float, the blocks in double.
  const __m256 a = _mm256_set1_ps(at);
  row_measure m;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m256 mass[unroll];
    for (__m256& v : mass)
      v = _mm256_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + unroll * lanes <= end; i += unroll * lanes)
      for (int u = 0; u < unroll; ++u) {
        const __m256 v = _mm256_loadu_ps(w + i + u * lanes);
        const __m256 in = _mm256_cmp_ps(v, a, _CMP_GE_OQ);
        mass[u] = _mm256_add_ps(mass[u], _mm256_and_ps(in, v));
        m.count += std::popcount(unsigned(_mm256_movemask_ps(in)));
      }
    float block = sum8(sum4(mass));
    for (; i < end; ++i)
      if (w[i] >= at) {
        block += w[i];
        ++m.count;
      }
    m.mass += block;
  }
  return m;
}

float kept_sums(const float* w, int64_t n, row_cut cut, float* block_sums) {
  const __m256 cw = _mm256_set1_ps(cut.w);
  const __m256i cid = _mm256_set1_epi32(cut.id);
  const __m256i ids = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    __m256 sum[unroll];
    for (__m256& v : sum)
      v = _mm256_setzero_ps();
    int64_t i = b * row_block;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (; i + unroll * lanes <= end; i += unroll * lanes)
      for (int u = 0; u < unroll; ++u) {
        const int64_t at = i + u * lanes;
        const __m256 v = _mm256_loadu_ps(w + at);
        const __m256i id = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(at)), ids);
        // id <= cut.id: not id > cut.id
        const __m256 id_in = _mm256_castsi256_ps(_mm256_cmpgt_epi32(id, cid));
        const __m256 kept = _mm256_or_ps(_mm256_cmp_ps(v, cw, _CMP_GT_OQ),
                                         _mm256_andnot_ps(id_in, _mm256_cmp_ps(v, cw, _CMP_EQ_OQ)));
        sum[u] = _mm256_add_ps(sum[u], _mm256_and_ps(kept, v));
      }
    float block = sum8(sum4(sum));
    for (; i < end; ++i)
      if (at_or_above(w[i], i, cut))
        block += w[i];
    block_sums[b] = block;
    total += block;
  }
  return total;
}

int64_t next_at_least(const float* x, int64_t from, int64_t n, float at) {
  const __m256 a = _mm256_set1_ps(at);
  int64_t i = from;
  for (; i + lanes <= n; i += lanes)
    if (const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), a, _CMP_GE_OQ)))
      return i + std::countr_zero(unsigned(hit));
  for (; i < n; ++i)
    if (x[i] >= at)
      return i;
  return n;
}

int64_t next_in(const float* x, int64_t from, int64_t n, float lo, float hi) {
  const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
  int64_t i = from;
  for (; i + lanes <= n; i += lanes) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const int hit = _mm256_movemask_ps(
      _mm256_and_ps(_mm256_cmp_ps(v, l, _CMP_GE_OQ), _mm256_cmp_ps(v, h, _CMP_LT_OQ)));
    if (hit)
      return i + std::countr_zero(unsigned(hit));
  }
  for (; i < n; ++i)
    if (x[i] >= lo && x[i] < hi)
      return i;
  return n;
}

int64_t gather(const float* w, int64_t n, float lo, float hi, float* out_w, int32_t* out_id) {
  const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
  int64_t count = 0;
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const __m256 v = _mm256_loadu_ps(w + i);
    for (unsigned in = unsigned(_mm256_movemask_ps(
           _mm256_and_ps(_mm256_cmp_ps(v, l, _CMP_GE_OQ), _mm256_cmp_ps(v, h, _CMP_LT_OQ))));
         in != 0; in &= in - 1) {
      const int64_t at = i + std::countr_zero(in);
      out_w[count] = w[at];
      out_id[count++] = static_cast<int32_t>(at);
    }
  }
  for (; i < n; ++i)
    if (w[i] >= lo && w[i] < hi) {
      out_w[count] = w[i];
      out_id[count++] = static_cast<int32_t>(i);
    }
  return count;
}

} // namespace kvactor::model::sampling::avx2
