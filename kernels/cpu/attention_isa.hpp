#pragma once
// Entry points of the per-ISA translation units of the CPU attention.

#include <stdint.h>

#include "kernels/params.hpp"

namespace kvactor::kernels::cpu::detail {

void attention_task_generic(const paged_attention_params& p, int64_t token, int32_t seq,
                            int32_t num_keys, int32_t kv_head, float* scratch);
// head_dims of the AVX-512 loop.
constexpr bool avx512_supports_head_dim(int32_t head_dim) {
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}
// Requires AVX-512 F/BW/VL/DQ and avx512_supports_head_dim.
void attention_task_avx512(const paged_attention_params& p, int64_t token, int32_t seq,
                           int32_t num_keys, int32_t kv_head, float* scratch);

} // namespace kvactor::kernels::cpu::detail

namespace kvactor::kernels::cpu::detail {

// bf16 only; requires AVX512_BF16 as well.
void attention_task_avx512_bf16(const paged_attention_params& p, int64_t token, int32_t seq,
                                int32_t num_keys, int32_t kv_head, float* scratch);

} // namespace kvactor::kernels::cpu::detail
