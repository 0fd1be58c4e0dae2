#pragma once

#include "actors/kvactor/defaults.hpp"
#include "actors/types.hpp"

#include <vector>

namespace kvactor {

enum class preemption_mode : uint8_t {
  swap,      // copy the KV to the host pool, copy it back later
  recompute, // drop the KV, prefill prompt and output again later
};

// When new sequences may start.
enum class batching_mode : uint8_t {
  continuous, // whenever a step has room
  fixed,      // static batching: a batch of up to max_num_seqs starts together
              // and runs to its last end before the next is admitted
  padded,     // static batching as a fixed-shape engine runs it: a sequence
              // that ends stays in its batch as a padding row, computing
              // tokens that nobody receives, until the batch's last end
};

// How much KV memory a sequence holds.
enum class kv_reservation : uint8_t {
  paged,      // the blocks its tokens fill, allocated as they come
  contiguous, // max_model_len slots reserved at admission, as systems without
              // paging must (its blocks still fill as tokens come; admission
              // counts the reservation against the device pool)
};

struct scheduler_config {
  int32_t max_num_batched_tokens = default_max_num_batched_tokens; // tokens per step: decodes plus prefill chunks
  int32_t max_num_seqs = default_max_num_seqs;                     // sequences per step
  preemption_mode preemption = preemption_mode::swap;
  std::vector<token_id> eos_tokens;     // a sampled one ends the sequence (unless ignore_eos)
  batching_mode batching = batching_mode::continuous;
  kv_reservation reservation = kv_reservation::paged;
  int32_t max_model_len = 0;            // contiguous: slots reserved per sequence
  bool prefix_caching = true;           // the block manager's: reuse full blocks by content
};

} // namespace kvactor
