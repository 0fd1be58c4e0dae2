#pragma once
// The prefix-cache key of a full block: a hash chained over (parent hash,
// block tokens), so equal keys mean equal whole prefixes (up to collisions,
// which the pool rules out by comparing the stored tokens on a hit).

#include "actors/core/types.hpp"

#include <span>

namespace kvactor {

// Parent hash of a sequence's first block.
inline constexpr block_hash root_block_hash = 0x6b766163746f7200ULL; // "kvactor"

inline block_hash hash_block(block_hash parent, std::span<const token_id> tokens) {
  // NOTE: a 64-bit multiply-xorshift mix per token; speed matters more than
  // strength because hits are verified against the stored tokens.
  uint64_t h = parent ^ (0x9e3779b97f4a7c15ULL * (tokens.size() + 1));
  for (token_id t : tokens) {
    h ^= static_cast<uint32_t>(t);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 29);
}

} // namespace kvactor
