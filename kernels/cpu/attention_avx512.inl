// AVX-512 attention loop, included by attention_avx512.cpp and
// attention_avx512_bf16.cpp: only these two files are compiled with -mavx512*
// (the second also with -mavx512bf16), and they are only called after
// best_isa() checked the CPU (see attention.cpp).
// NOTE: intrinsics only, no inline library code (see attention_task.hpp);
// everything here has internal linkage.
//
// Per (query token, KV head) and tile of up to 16 keys of one block, for each
// query head g of the GQA group:
//   QK: q_g stays in registers; 16 partial-sum vectors (one per key) are
//       folded into one vector of 16 logits by a transpose-add tree
//   softmax: vector max, vector exp, one rescale of acc_g per tile
//   PV: acc_g (head_dim floats) in registers, V rows streamed from L1
// K/V rows are read from memory once per tile and from L1 for g > 0.
// With AVX512_BF16 and a bf16 cache, Q.K runs on the raw bf16 rows with
// vdpbf16ps (exact products, f32 sums): no conversion of K at all; P.V too,
// on pairs of keys, with P rounded to bf16 (as FlashAttention does for P.V).
#pragma once
#include <immintrin.h>

#include "kernels/cpu/attention_isa.hpp"
#include "kernels/cpu/attention_task.hpp"

namespace kvactor::kernels::cpu::detail {
namespace {

// 16 elements of a row of type T at element offset 16 * c, as floats.
template <dtype T>
inline __m512 load_chunk(const void* row, int32_t c) {
  if constexpr (T == dtype::f32) {
    return _mm512_loadu_ps(static_cast<const float*>(row) + 16 * c);
  } else {
    const __m256i raw = _mm256_loadu_si256(
      reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(row) + 16 * c));
    if constexpr (T == dtype::f16)
      return _mm512_cvtph_ps(raw);
    else
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
  }
}

template <dtype T>
inline void store_chunk(void* row, int32_t c, __m512 v) {
  if constexpr (T == dtype::f32) {
    _mm512_storeu_ps(static_cast<float*>(row) + 16 * c, v);
  } else {
    __m256i h;
    if constexpr (T == dtype::f16) {
      h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else { // bf16, round to nearest even (outputs are finite)
      const __m512i x = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
      h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(
        _mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(row) + 16 * c), h);
  }
}

// e^x, about 1 ulp on [-87, 88]; inputs below -87 give ~0.
inline __m512 exp_ps(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  x = _mm512_min_ps(x, _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x); // Cody-Waite ln2 split
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// s[t] holds 16 partial sums of key t; returns the 16 totals, key t in lane t.
inline __m512 transpose_sum16(const __m512* s) {
  __m512 w[8], u[4], z[2];
  for (int i = 0; i < 8; ++i) // per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3]
    w[i] = _mm512_add_ps(_mm512_unpacklo_ps(s[2 * i], s[2 * i + 1]),
                         _mm512_unpackhi_ps(s[2 * i], s[2 * i + 1]));
  for (int i = 0; i < 4; ++i) // per 128-bit lane: keys 4i .. 4i+3
    u[i] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(w[2 * i], w[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int i = 0; i < 2; ++i)
    z[i] = _mm512_add_ps(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_add_ps(_mm512_shuffle_f32x4(z[0], z[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(z[0], z[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// One tile of n <= 16 keys for one query head. K rows are TK, `k_stride`
// bytes apart; V rows are TV, `v_stride` bytes apart. Q.K uses the f32 scaled
// query q, or with BF16_DOT the raw bf16 query q_raw and the scale afterwards.
// Updates the head's running max m, sum l and acc [16 * C].
template <dtype TK, dtype TV, int C, bool BF16_DOT>
inline void tile_for_head(const char* k_rows, int64_t k_stride, const char* v_rows,
                          int64_t v_stride, int32_t n, __mmask16 valid, const float* q,
                          const void* q_raw, float scale, float* acc, float& m, float& l,
                          float* probs) {
  (void)q;     // unused with BF16_DOT
  (void)q_raw; // used only with BF16_DOT
  __m512 partial[16];
  if constexpr (BF16_DOT) {
#if defined(__AVX512BF16__)
    static_assert(TK == dtype::bf16 && C % 2 == 0,
                  "vdpbf16ps reads bf16 rows in 32-element chunks");
    __m512bh qv[C / 2];
    for (int j = 0; j < C / 2; ++j)
      qv[j] = (__m512bh)_mm512_loadu_si512(static_cast<const char*>(q_raw) + 64 * j);
    for (int32_t t = 0; t < 16; ++t) {
      if (t >= n) {
        partial[t] = _mm512_setzero_ps();
        continue;
      }
      const char* row = k_rows + t * k_stride;
      __m512 s0 = _mm512_dpbf16_ps(_mm512_setzero_ps(), qv[0], (__m512bh)_mm512_loadu_si512(row));
      __m512 s1 = _mm512_setzero_ps();
      for (int j = 1; j + 1 < C / 2; j += 2) {
        s1 = _mm512_dpbf16_ps(s1, qv[j], (__m512bh)_mm512_loadu_si512(row + 64 * j));
        s0 = _mm512_dpbf16_ps(s0, qv[j + 1], (__m512bh)_mm512_loadu_si512(row + 64 * (j + 1)));
      }
      if ((C / 2) % 2 == 0)
        s1 =
          _mm512_dpbf16_ps(s1, qv[C / 2 - 1], (__m512bh)_mm512_loadu_si512(row + 64 * (C / 2 - 1)));
      partial[t] = _mm512_add_ps(s0, s1);
    }
#else
    static_assert(!BF16_DOT, "BF16_DOT needs -mavx512bf16");
#endif
  } else {
    __m512 qv[C];
    for (int c = 0; c < C; ++c)
      qv[c] = _mm512_loadu_ps(q + 16 * c);
    for (int32_t t = 0; t < 16; ++t) {
      if (t >= n) {
        partial[t] = _mm512_setzero_ps();
        continue;
      }
      const char* row = k_rows + t * k_stride;
      __m512 s0 = _mm512_mul_ps(qv[0], load_chunk<TK>(row, 0));
      __m512 s1 = C > 1 ? _mm512_mul_ps(qv[1], load_chunk<TK>(row, 1)) : _mm512_setzero_ps();
      for (int c = 2; c + 1 < C; c += 2) {
        s0 = _mm512_fmadd_ps(qv[c], load_chunk<TK>(row, c), s0);
        s1 = _mm512_fmadd_ps(qv[c + 1], load_chunk<TK>(row, c + 1), s1);
      }
      partial[t] = _mm512_add_ps(s0, s1);
    }
  }
  __m512 logits = transpose_sum16(partial);
  if constexpr (BF16_DOT)
    logits = _mm512_mul_ps(logits, _mm512_set1_ps(scale));
  const float tile_max = _mm512_mask_reduce_max_ps(valid, logits);
  const float m_new = tile_max > m ? tile_max : m;
  __m512 a[C];
  for (int c = 0; c < C; ++c)
    a[c] = _mm512_loadu_ps(acc + 16 * c);
  if (m_new > m) {
    // alpha = e^(m - m_new); 0 on the first tile (m = -inf)
    const __m512 alpha = exp_ps(_mm512_set1_ps(m - m_new));
    for (int c = 0; c < C; ++c)
      a[c] = _mm512_mul_ps(a[c], alpha);
    l *= _mm512_cvtss_f32(alpha);
    m = m_new;
  }
  const __m512 pr =
    _mm512_maskz_mov_ps(valid, exp_ps(_mm512_sub_ps(logits, _mm512_set1_ps(m_new))));
  l += _mm512_reduce_add_ps(pr);
  if constexpr (BF16_DOT) {
#if defined(__AVX512BF16__)
    // P.V by vdpbf16ps over pairs of keys: v_rows holds the tile's V rows
    // interleaved in pairs (see attention_tiles), P is rounded to bf16 like
    // FlashAttention's P.V; acc comes out in the interleaved dim order.
    alignas(32) uint16_t pb[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(pb), (__m256i)_mm512_cvtneps_pbh(pr));
    for (int32_t u = 0; u < (n + 1) / 2; ++u) {
      const uint32_t pair =
        static_cast<uint32_t>(pb[2 * u]) | (static_cast<uint32_t>(pb[2 * u + 1]) << 16);
      const __m512bh pp = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
      const char* base = v_rows + int64_t{u} * C * 64;
      for (int c = 0; c < C; ++c)
        a[c] = _mm512_dpbf16_ps(a[c], pp, (__m512bh)_mm512_loadu_si512(base + 64 * c));
    }
    (void)v_stride;
#endif
  } else {
    _mm512_storeu_ps(probs, pr);
    for (int32_t t = 0; t < n; ++t) {
      const __m512 pt = _mm512_set1_ps(probs[t]);
      const char* row = v_rows + t * v_stride;
      for (int c = 0; c < C; ++c)
        a[c] = _mm512_fmadd_ps(pt, load_chunk<TV>(row, c), a[c]);
    }
  }
  for (int c = 0; c < C; ++c)
    _mm512_storeu_ps(acc + 16 * c, a[c]);
}

// C = head_dim / 16 chunks per row. BF16_DOT: Q.K by vdpbf16ps (T == bf16).
template <dtype T, int C, bool BF16_DOT>
void attention_tiles(const paged_attention_params& p, int64_t token, int32_t seq, int32_t num_keys,
                     int32_t kv_head, float* scratch) {
  constexpr int64_t elem = T == dtype::f32 ? 4 : 2;
  constexpr int32_t d = 16 * C;
  const int32_t bs = p.block_size;
  const int32_t group = p.num_heads / p.num_kv_heads;
  const int64_t row_bytes = int64_t{p.num_kv_heads} * d * elem;
  float* q = scratch;            // [group, d], scaled
  float* acc = q + group * d;    // [group, d]
  float* m = acc + group * d;    // [group]
  float* l = m + group;          // [group]
  float* probs = l + group;      // [16]
  float* k_f32 = probs + 16;     // [16, d] the tile's K rows as f32 (16-bit types)
  float* v_f32 = k_f32 + 16 * d; // [16, d]

  const int32_t head0 = kv_head * group;
  const int64_t q_stride =
    p.query_stride > 0 ? p.query_stride : int64_t{p.num_heads} * d; // elements
  const char* query =
    static_cast<const char*>(p.query) + (token * q_stride + int64_t{head0} * d) * elem;
  const __m512 scale = _mm512_set1_ps(p.scale);
  for (int32_t g = 0; g < group; ++g) {
    for (int c = 0; c < C; ++c) {
      _mm512_storeu_ps(q + g * d + 16 * c,
                       _mm512_mul_ps(scale, load_chunk<T>(query + g * d * elem, c)));
      _mm512_storeu_ps(acc + g * d + 16 * c, _mm512_setzero_ps());
    }
    m[g] = -INFINITY;
    l[g] = 0.0f;
  }

  const int32_t* table = p.block_tables + int64_t{seq} * p.max_blocks_per_seq;
  const char* k_cache = static_cast<const char*>(p.k_cache) + kv_head * d * elem;
  const char* v_cache = static_cast<const char*>(p.v_cache) + kv_head * d * elem;
  for (int32_t key0 = 0; key0 < num_keys;) {
    // a tile: up to 16 keys of one block
    const int32_t offset = key0 % bs;
    int32_t n = bs - offset;
    n = n < 16 ? n : 16;
    n = n < num_keys - key0 ? n : num_keys - key0;
    const char* k_tile = k_cache + (int64_t{table[key0 / bs]} * bs + offset) * row_bytes;
    const char* v_tile = v_cache + (int64_t{table[key0 / bs]} * bs + offset) * row_bytes;
    const int32_t next = key0 + n;
    if (next < num_keys) {
      const int64_t next_slot = int64_t{table[next / bs]} * bs + next % bs;
      _mm_prefetch(k_cache + next_slot * row_bytes, _MM_HINT_T0);
      _mm_prefetch(v_cache + next_slot * row_bytes, _MM_HINT_T0);
    }
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1u);
    const char* q_raw = query; // head g at q_raw + g * d * elem
    if constexpr (BF16_DOT) {
      // V rows of keys (2u, 2u+1) interleaved per 16-bit element (a zero row
      // pads an odd tile): pair u, 32-dim chunk j, unpack lo/hi ->
      // v_pairs + (u * C + 2 j + lo|hi) * 64 bytes. Shared by the group.
      char* v_pairs = reinterpret_cast<char*>(v_f32);
      for (int32_t u = 0; u < (n + 1) / 2; ++u) {
        const char* r0 = v_tile + 2 * u * row_bytes;
        const char* r1 = r0 + row_bytes;
        for (int j = 0; j < C / 2; ++j) {
          const __m512i x = _mm512_loadu_si512(r0 + 64 * j);
          const __m512i y =
            2 * u + 1 < n ? _mm512_loadu_si512(r1 + 64 * j) : _mm512_setzero_si512();
          _mm512_storeu_si512(v_pairs + (int64_t{u} * C + 2 * j) * 64, _mm512_unpacklo_epi16(x, y));
          _mm512_storeu_si512(v_pairs + (int64_t{u} * C + 2 * j + 1) * 64,
                              _mm512_unpackhi_epi16(x, y));
        }
      }
      for (int32_t g = 0; g < group; ++g)
        tile_for_head<T, T, C, true>(k_tile, row_bytes, v_pairs, 0, n, valid, q + g * d,
                                     q_raw + g * d * elem, p.scale, acc + g * d, m[g], l[g], probs);
    } else if (T != dtype::f32 && group > 1) {
      // NOTE: convert the tile once instead of once per query head: the
      // 16-bit -> f32 conversions compete with the FMAs for the same ports.
      for (int32_t t = 0; t < n; ++t)
        for (int c = 0; c < C; ++c) {
          _mm512_storeu_ps(k_f32 + t * d + 16 * c, load_chunk<T>(k_tile + t * row_bytes, c));
          _mm512_storeu_ps(v_f32 + t * d + 16 * c, load_chunk<T>(v_tile + t * row_bytes, c));
        }
      for (int32_t g = 0; g < group; ++g)
        tile_for_head<dtype::f32, dtype::f32, C, false>(
          reinterpret_cast<const char*>(k_f32), int64_t{d} * 4,
          reinterpret_cast<const char*>(v_f32), int64_t{d} * 4, n, valid, q + g * d, nullptr,
          p.scale, acc + g * d, m[g], l[g], probs);
    } else {
      for (int32_t g = 0; g < group; ++g)
        tile_for_head<T, T, C, false>(k_tile, row_bytes, v_tile, row_bytes, n, valid, q + g * d,
                                      nullptr, p.scale, acc + g * d, m[g], l[g], probs);
    }
    key0 = next;
  }

  char* out = static_cast<char*>(p.out) + (token * p.num_heads + head0) * d * elem;
  if constexpr (BF16_DOT) {
    // undo the interleaved order: lane i of unpack half h of chunk j holds
    // dim 32 j + 8 (i / 4) + 4 h + i % 4
    for (int32_t g = 0; g < group; ++g) {
      float* a = acc + g * d;
      for (int j = 0; j < C / 2; ++j)
        for (int h = 0; h < 2; ++h)
          for (int i = 0; i < 16; ++i)
            k_f32[32 * j + 8 * (i / 4) + 4 * h + i % 4] = a[(2 * j + h) * 16 + i];
      for (int32_t i = 0; i < d; ++i)
        a[i] = k_f32[i];
    }
  }
  for (int32_t g = 0; g < group; ++g) {
    const __m512 inv = _mm512_set1_ps(1.0f / l[g]);
    for (int c = 0; c < C; ++c)
      store_chunk<T>(out + g * d * elem, c,
                     _mm512_mul_ps(inv, _mm512_loadu_ps(acc + g * d + 16 * c)));
  }
}

template <dtype T, bool BF16_DOT>
void dispatch_head_dim(const paged_attention_params& p, int64_t token, int32_t seq,
                       int32_t num_keys, int32_t kv_head, float* scratch) {
  switch (p.head_dim) {
    case 64: attention_tiles<T, 4, BF16_DOT>(p, token, seq, num_keys, kv_head, scratch); break;
    case 128: attention_tiles<T, 8, BF16_DOT>(p, token, seq, num_keys, kv_head, scratch); break;
    case 256: attention_tiles<T, 16, BF16_DOT>(p, token, seq, num_keys, kv_head, scratch); break;
    default: break; // excluded by avx512_supports_head_dim
  }
}

} // namespace
} // namespace kvactor::kernels::cpu::detail
