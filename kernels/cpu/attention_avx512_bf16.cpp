// AVX-512 attention for bf16 caches with AVX512_BF16 (vdpbf16ps for Q.K);
// see attention_avx512.inl.
#include "kernels/cpu/attention_avx512.inl"

namespace kvactor::kernels::cpu::detail {

void attention_task_avx512_bf16(const paged_attention_params& p, int64_t token, int32_t seq,
                                int32_t num_keys, int32_t kv_head, float* scratch) {
  dispatch_head_dim<dtype::bf16, true>(p, token, seq, num_keys, kv_head, scratch);
}

} // namespace kvactor::kernels::cpu::detail
