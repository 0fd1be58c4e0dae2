#include <algorithm>
#include <vector>

#include "base/assert.hpp"
#include "kernels/cpu/attention_isa.hpp"
#include "kernels/cpu/attention_task.hpp"
#include "kernels/cpu/kernels.hpp"

namespace kvactor::kernels::cpu {

isa best_isa() {
  static const isa best = [] {
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    if (!avx512) return isa::generic;
    return __builtin_cpu_supports("avx512bf16") ? isa::avx512_bf16 : isa::avx512;
  }();
  return best;
}

const char* isa_name(isa i) {
  switch (i) {
  case isa::generic: return "generic";
  case isa::avx512: return "avx512";
  case isa::avx512_bf16: return "avx512_bf16";
  }
  return "?";
}

void paged_attention(const paged_attention_params& p, thread_pool& pool, isa simd) {
  KVACTOR_ASSERT(p.num_kv_heads > 0 && p.num_heads % p.num_kv_heads == 0,
                 "num_heads must be a multiple of num_kv_heads");
  KVACTOR_ASSERT(p.block_size > 0 && p.head_dim > 0, "positive block_size and head_dim");
  KVACTOR_ASSERT(p.query_start_loc != nullptr || p.num_tokens == p.num_seqs,
                 "decode has one token per sequence");
  KVACTOR_ASSERT(static_cast<int>(simd) <= static_cast<int>(best_isa()),
                 "instruction set not supported by this CPU");
  const bool use_avx512 = simd != isa::generic && detail::avx512_supports_head_dim(p.head_dim);
  const bool use_bf16_dot = use_avx512 && simd == isa::avx512_bf16 && p.type == dtype::bf16;
  const int32_t group = p.num_heads / p.num_kv_heads;
  const int64_t scratch_floats = detail::attention_scratch_floats(group, p.head_dim, p.block_size);

  // NOTE: one task per (token, KV head): decode with batch 1 still yields
  // num_kv_heads tasks for the pool.
  pool.parallel_for(int64_t{p.num_tokens} * p.num_kv_heads, [&](int64_t i) {
    thread_local std::vector<float> scratch;
    if (static_cast<int64_t>(scratch.size()) < scratch_floats)
      scratch.resize(static_cast<size_t>(scratch_floats));
    const int64_t token = i / p.num_kv_heads;
    const int32_t kv_head = static_cast<int32_t>(i % p.num_kv_heads);
    int32_t seq = static_cast<int32_t>(token), q_index = 0, q_len = 1;
    if (p.query_start_loc != nullptr) {
      const int32_t* qsl = p.query_start_loc;
      seq = static_cast<int32_t>(std::upper_bound(qsl, qsl + p.num_seqs + 1, token) - qsl) - 1;
      q_index = static_cast<int32_t>(token) - qsl[seq];
      q_len = qsl[seq + 1] - qsl[seq];
    }
    const int32_t num_keys = p.seq_lens[seq] - q_len + q_index + 1;  // causal
    KVACTOR_ASSERT(num_keys >= 1, "seq_lens must cover the sequence's query tokens");
    if (use_bf16_dot)
      detail::attention_task_avx512_bf16(p, token, seq, num_keys, kv_head, scratch.data());
    else if (use_avx512)
      detail::attention_task_avx512(p, token, seq, num_keys, kv_head, scratch.data());
    else detail::attention_task_generic(p, token, seq, num_keys, kv_head, scratch.data());
  });
}

} // namespace kvactor::kernels::cpu
