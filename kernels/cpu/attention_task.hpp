#pragma once
// The portable CPU attention loop for one (query token, KV head): all query
// heads of the GQA group at once, so each K/V row is read from memory once
// per token. Instantiated with an `Ops` policy of row primitives
// (attention_generic.cpp); the AVX-512 loop (attention_avx512.inl) has its own
// tiles and uses only attention_scratch_floats from here.
//
// NOTE: only <stdint.h>/<math.h> here and no std:: calls: the AVX-512
// translation units include this with -mavx512f, and any inline library
// function emitted there could be merged (ODR) into callers on machines
// without AVX-512.

#include <math.h>
#include <stdint.h>

#include "kernels/params.hpp"

namespace kvactor::kernels::cpu::detail {

// Floats of scratch the attention loops need (either ISA).
inline int64_t attention_scratch_floats(int32_t group, int32_t head_dim, int32_t block_size) {
  return 2 * int64_t{group} * head_dim + int64_t{group} * block_size + 2 * int64_t{head_dim} +
         2 * group + 16 + 32 * int64_t{head_dim};
}

// Ops: load_row(dtype, src, float* dst, n), dot(a, b, n), axpy(a, x, y, n)
// (y += a x), scale(a, y, n) (y *= a), store_row(dtype, src, a, dst, n)
// (dst = a src, converted).
template <class Ops>
void attention_task(const paged_attention_params& p, int64_t token, int32_t seq, int32_t num_keys,
                    int32_t kv_head, float* scratch) {
  const int32_t d = p.head_dim;
  const int32_t bs = p.block_size;
  const int32_t group = p.num_heads / p.num_kv_heads;
  const int64_t elem = p.type == dtype::f32 ? 4 : 2;
  const int64_t row_bytes = int64_t{p.num_kv_heads} * d * elem;  // one slot, all heads
  float* q = scratch;              // [group, head_dim], scaled
  float* acc = q + group * d;      // [group, head_dim]
  float* s = acc + group * d;      // [group, block_size] logits, then probabilities
  float* k_row = s + group * bs;   // [head_dim]
  float* v_row = k_row + d;        // [head_dim]
  float* m = v_row + d;            // [group] running max
  float* l = m + group;            // [group] running sum

  const int32_t head0 = kv_head * group;
  // q_stride in elements
  const int64_t q_stride = p.query_stride > 0 ? p.query_stride : int64_t{p.num_heads} * d;
  const char* query =
    static_cast<const char*>(p.query) + (token * q_stride + int64_t{head0} * d) * elem;
  for (int32_t g = 0; g < group; ++g) {
    Ops::load_row(p.type, query + g * d * elem, q + g * d, d);
    Ops::scale(p.scale, q + g * d, d);
    for (int32_t i = 0; i < d; ++i) acc[g * d + i] = 0.0f;
    m[g] = -INFINITY;
    l[g] = 0.0f;
  }

  const int32_t* table = p.block_tables + int64_t{seq} * p.max_blocks_per_seq;
  const char* k_cache = static_cast<const char*>(p.k_cache) + kv_head * d * elem;
  const char* v_cache = static_cast<const char*>(p.v_cache) + kv_head * d * elem;
  const int32_t num_blocks = (num_keys + bs - 1) / bs;
  for (int32_t b = 0; b < num_blocks; ++b) {
    const int32_t n = num_keys - b * bs < bs ? num_keys - b * bs : bs;
    const int64_t slot0 = int64_t{table[b]} * bs;
    if (b + 1 < num_blocks) {  // the next block's first rows
      const int64_t next = int64_t{table[b + 1]} * bs;
      __builtin_prefetch(k_cache + next * row_bytes);
      __builtin_prefetch(v_cache + next * row_bytes);
    }
    for (int32_t t = 0; t < n; ++t) {
      const char* row = k_cache + (slot0 + t) * row_bytes;
      if (t + 1 < n) __builtin_prefetch(row + row_bytes);
      const float* k = reinterpret_cast<const float*>(row);
      if (p.type != dtype::f32) {
        Ops::load_row(p.type, row, k_row, d);
        k = k_row;
      }
      for (int32_t g = 0; g < group; ++g) s[g * bs + t] = Ops::dot(q + g * d, k, d);
    }
    for (int32_t g = 0; g < group; ++g) {
      float* sg = s + g * bs;
      float block_max = sg[0];
      for (int32_t t = 1; t < n; ++t) block_max = sg[t] > block_max ? sg[t] : block_max;
      const float m_new = block_max > m[g] ? block_max : m[g];
      if (m_new > m[g]) {
        const float alpha = expf(m[g] - m_new);  // 0 on the first block
        Ops::scale(alpha, acc + g * d, d);
        l[g] *= alpha;
        m[g] = m_new;
      }
      float sum = 0.0f;
      for (int32_t t = 0; t < n; ++t) {
        sg[t] = expf(sg[t] - m_new);
        sum += sg[t];
      }
      l[g] += sum;
    }
    for (int32_t t = 0; t < n; ++t) {
      const char* row = v_cache + (slot0 + t) * row_bytes;
      if (t + 1 < n) __builtin_prefetch(row + row_bytes);
      const float* v = reinterpret_cast<const float*>(row);
      if (p.type != dtype::f32) {
        Ops::load_row(p.type, row, v_row, d);
        v = v_row;
      }
      for (int32_t g = 0; g < group; ++g) Ops::axpy(s[g * bs + t], v, acc + g * d, d);
    }
  }

  char* out = static_cast<char*>(p.out) + (token * p.num_heads + head0) * d * elem;
  for (int32_t g = 0; g < group; ++g)
    Ops::store_row(p.type, acc + g * d, 1.0f / l[g], out + g * d * elem, d);
}

} // namespace kvactor::kernels::cpu::detail
