#pragma once
// Identifiers shared by the bookkeeping core.

#include "model/token_id.hpp"

#include <cstdint>

namespace kvactor {

using model::token_id;
using block_id = int32_t;    // index of a block in the device or host pool
using seq_id = uint64_t;     // one sequence (request) for its whole life
using slot_id = int64_t;     // block * block_size + offset: a row of the KV cache
using block_hash = uint64_t; // prefix-cache key of a full block, chained

inline constexpr block_id no_block = -1;
inline constexpr token_id no_token = -1;

// One block copy for the executor: within the device pool (copy-on-write) or
// between the device and host pools (swap).
struct block_copy {
  block_id src = no_block;
  block_id dst = no_block;
  friend bool operator==(const block_copy&, const block_copy&) = default;
};

} // namespace kvactor
