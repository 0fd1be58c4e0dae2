// AVX-512 attention (F/BW/VL/DQ); see attention_avx512.inl.
#include "kernels/cpu/attention_avx512.inl"

namespace kvactor::kernels::cpu::detail {

void attention_task_avx512(const paged_attention_params& p, int64_t token, int32_t seq,
                           int32_t num_keys, int32_t kv_head, float* scratch) {
  switch (p.type) {
    case dtype::f32:
      dispatch_head_dim<dtype::f32, false>(p, token, seq, num_keys, kv_head, scratch);
      break;
    case dtype::f16:
      dispatch_head_dim<dtype::f16, false>(p, token, seq, num_keys, kv_head, scratch);
      break;
    case dtype::bf16:
      dispatch_head_dim<dtype::bf16, false>(p, token, seq, num_keys, kv_head, scratch);
      break;
  }
}

} // namespace kvactor::kernels::cpu::detail
