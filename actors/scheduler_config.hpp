#pragma once

#include "actors/types.hpp"

#include <vector>

namespace kvactor {

enum class preemption_mode : uint8_t {
  swap,      // copy the KV to the host pool, copy it back later
  recompute, // drop the KV, prefill prompt and output again later
};

struct scheduler_config {
  int32_t max_num_batched_tokens = 512; // tokens per step: decodes plus prefill chunks
  int32_t max_num_seqs = 64;            // sequences per step
  preemption_mode preemption = preemption_mode::swap;
  std::vector<token_id> eos_tokens;     // a sampled one ends the sequence (unless ignore_eos)
};

} // namespace kvactor
