#pragma once
// pool_figures: what the device block pool reports (stats, logs, benchmarks).

#include "actors/core/block_pool.hpp"

#include <cstdint>
#include <string>

namespace kvactor {

struct pool_figures {
  int32_t num_blocks = 0;
  int32_t num_free_blocks = 0;   // no holder, no cached content
  int32_t num_cached_blocks = 0; // no holder, content kept for prefix hits
  int32_t num_used_blocks = 0;   // held by at least one sequence
  int64_t num_used_slots = 0;    // reserved token slots in used blocks
  int64_t num_allocated_slots = 0;
  int64_t num_block_refs = 0;    // sum of reference counts of used blocks
  int64_t num_prefix_queries = 0;
  int64_t num_prefix_hits = 0;
  int64_t num_evictions = 0;
  int32_t num_sequences = 0;     // with a block table (the ledger's)

  // Used slots over allocated slots (1 when nothing is allocated).
  double kv_utilisation() const;
  // Block-table entries per used block: above 1 when blocks are shared.
  double sharing_ratio() const;
  double prefix_hit_rate() const;
};

// The pool's part of the figures; the prefix counters stay zero.
pool_figures measure(const block_pool& pool);

std::string to_string(const pool_figures& f);

} // namespace kvactor
