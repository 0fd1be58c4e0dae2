// AVX-512 row primitives. This file alone is compiled with -mavx512f & co.
// and is only called after best_isa() checked the CPU (see attention.cpp).
// NOTE: intrinsics only, no inline library code (see attention_task.hpp).
#include <immintrin.h>

#include "kernels/cpu/attention_isa.hpp"
#include "kernels/cpu/attention_task.hpp"

namespace kvactor::kernels::cpu::detail {
namespace {

inline __m512 load16(dtype t, const void* src, int32_t i) {
  if (t == dtype::f32) return _mm512_loadu_ps(static_cast<const float*>(src) + i);
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(src) + i));
  if (t == dtype::f16) return _mm512_cvtph_ps(raw);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));  // bf16
}

struct avx512_ops {
  static void load_row(dtype t, const void* src, float* dst, int32_t n) {
    for (int32_t i = 0; i < n; i += 16) _mm512_storeu_ps(dst + i, load16(t, src, i));
  }
  static float dot(const float* a, const float* b, int32_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int32_t i = 0;
    for (; i + 32 <= n; i += 32) {
      s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
      s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    if (i < n) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
  }
  static void axpy(float a, const float* x, float* y, int32_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int32_t i = 0; i < n; i += 16)
      _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  static void scale(float a, float* y, int32_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int32_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(va, _mm512_loadu_ps(y + i)));
  }
  static void store_row(dtype t, const float* src, float a, void* dst, int32_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int32_t i = 0; i < n; i += 16) {
      const __m512 v = _mm512_mul_ps(va, _mm512_loadu_ps(src + i));
      if (t == dtype::f32) {
        _mm512_storeu_ps(static_cast<float*>(dst) + i, v);
        continue;
      }
      __m256i h;
      if (t == dtype::f16) {
        h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      } else {  // bf16, round to nearest even (NaN not special-cased: outputs are finite)
        const __m512i x = _mm512_castps_si512(v);
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
        const __m512i rounded = _mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
        h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(dst) + i), h);
    }
  }
};

} // namespace

void attention_task_avx512(const paged_attention_params& p, int64_t token, int32_t seq, int32_t num_keys,
                           int32_t kv_head, float* scratch) {
  attention_task<avx512_ops>(p, token, seq, num_keys, kv_head, scratch);
}

} // namespace kvactor::kernels::cpu::detail
