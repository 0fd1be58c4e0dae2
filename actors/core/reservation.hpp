#pragma once
// A step's reservation: the scheduler's request to the block manager (one
// entry per sequence, in scheduling order) and the ledger's answer. Plain
// structs, sent between the two actors.

#include "actors/core/step.hpp"
#include "actors/core/table_delta.hpp"
#include "actors/core/token_list.hpp"

#include <vector>

namespace kvactor {

struct reservation_entry {
  seq_id id = 0;
  token_list new_tokens;            // tokens the ledger has not seen yet
  int32_t num_computed = 0;         // tokens whose K/V the cache holds
  int32_t num_new_tokens = 0;       // at most this many tokens to compute this step
};

struct granted_entry {
  seq_id id = 0;
  int32_t start = 0;                 // computed tokens, prefix hit included
  int32_t num_new_tokens = 0;
  int32_t num_cached_tokens = 0;     // from the prefix cache in this grant
  table_delta blocks;                // the block table's change since the last grant
};

struct reservation_result {
  std::vector<granted_entry> granted;
  std::vector<block_copy> copies;    // copy-on-write, before the step
  int32_t denied = -1;               // index of the entry that did not fit, if any
  int32_t num_blocks_short = 0;      // how many more blocks it needed
};

} // namespace kvactor
