#pragma once
// Identifiers shared by the bookkeeping core.

#include "kvactor/defaults.hpp"
#include "model/token_id.hpp"

#include <cstdint>

namespace kvactor {

using model::token_id;
using block_id = int32_t;    // index of a block in the device or host pool
using seq_id = uint64_t;     // one sequence (request) for its whole life
using block_hash = uint64_t; // prefix-cache key of a full block, chained

// A request's choices run as sequences of their own: choice c of request r
// is sequence r * max_choices + c.
inline constexpr seq_id sequence_of(uint64_t request, int32_t choice) {
  return request * max_choices + static_cast<seq_id>(choice);
}
inline constexpr uint64_t request_of(seq_id id) { return id / max_choices; }
inline constexpr int32_t choice_of(seq_id id) { return static_cast<int32_t>(id % max_choices); }

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
