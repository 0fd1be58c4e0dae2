#pragma once

#include "kvactor/defaults.hpp"
#include "kvactor/engine_config.hpp"
#include "actors/core/types.hpp"

#include <vector>

namespace kvactor {

struct scheduler_config {
  // Tokens per step: decodes plus prefill chunks.
  int32_t max_num_batched_tokens = default_max_num_batched_tokens;
  int32_t max_num_seqs = default_max_num_seqs; // sequences per step
  preemption_mode preemption = preemption_mode::swap;
  std::vector<token_id> eos_tokens; // a sampled one ends the sequence (unless ignore_eos)
  batching_mode batching = batching_mode::continuous;
  kv_reservation reservation = kv_reservation::paged;
  int32_t max_model_len = 0;  // contiguous: slots reserved per sequence
  bool prefix_caching = true; // the block manager's: reuse full blocks by content
};

} // namespace kvactor
