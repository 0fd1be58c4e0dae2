#pragma once
// Entry points of the per-ISA translation units of the CPU attention.

#include <stdint.h>

#include "kernels/params.hpp"

namespace kvactor::kernels::cpu::detail {

void attention_task_generic(const paged_attention_params& p, int64_t token, int32_t seq, int32_t num_keys,
                            int32_t kv_head, float* scratch);
// Requires AVX-512 F/BW/VL/DQ and head_dim % 16 == 0.
void attention_task_avx512(const paged_attention_params& p, int64_t token, int32_t seq, int32_t num_keys,
                           int32_t kv_head, float* scratch);

} // namespace kvactor::kernels::cpu::detail
