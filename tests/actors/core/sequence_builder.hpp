#pragma once
// Helpers for the bookkeeping tests: token runs and a step driver that plays
// the executor's part (compute the reserved tokens, then cache full blocks).

#include "actors/core/block_allocator.hpp"
#include "actors/core/kv_sequence.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <ostream>
#include <vector>

namespace kvactor::testing {

inline std::vector<token_id> token_run(int n, token_id first = 0) {
  std::vector<token_id> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

inline std::vector<token_id> concat(std::vector<token_id> a, const std::vector<token_id>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Reserves and computes up to max_tokens more tokens of seq, taking a prefix
// hit first when it has no KV yet; returns the copies to run, or nullopt when
// the pool is short.
inline std::optional<std::vector<block_copy>> compute(block_allocator& mgr, kv_sequence& seq,
                                                      int32_t max_tokens) {
  std::optional<prefix_hit> hit;
  if (seq.num_computed_tokens() == 0)
    hit = mgr.find_cached_prefix(seq);
  const int32_t hit_tokens = hit ? int32_t(hit->blocks.size()) * mgr.block_size() : 0;
  const int32_t n = std::min(max_tokens, seq.num_uncomputed_tokens() - hit_tokens);
  auto copies = mgr.allocate_slots(seq, n, hit ? &*hit : nullptr);
  if (copies) {
    seq.add_computed_tokens(n);
    mgr.cache_computed_blocks(seq);
  }
  return copies;
}

// Computes everything seq has not computed yet.
inline std::optional<std::vector<block_copy>> prefill(block_allocator& mgr, kv_sequence& seq) {
  return compute(mgr, seq, seq.num_uncomputed_tokens());
}

} // namespace kvactor::testing

namespace kvactor {

// gtest prints table deltas in failures as "{keep 2, add [4]}".
inline void PrintTo(const table_delta& d, std::ostream* os) {
  *os << "{keep " << d.num_kept << ", add [";
  for (size_t i = 0; i < d.added.size(); ++i)
    *os << (i ? ", " : "") << d.added[i];
  *os << "]}";
}

} // namespace kvactor
