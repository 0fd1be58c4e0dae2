#pragma once
// block_allocator: the per-sequence verbs over the device block pool — prefix
// matching, slot reservation with copy-on-write, prefix registration, fork
// and release. The state class of block_manager_actor; no CAF in here.
//
// A step's life for one sequence (a kv_sequence):
//   hit = find_cached_prefix(seq)            (first scheduling only)
//   copies = allocate_slots(seq, n, &hit)    (all or nothing; copies run first)
//   ... the executor computes n tokens; seq.add_computed_tokens(n) ...
//   cache_computed_blocks(seq)               (full blocks join the prefix cache)
//   free(seq)                                (finish, abort, preemption)

#include "actors/core/block_pool.hpp"
#include "actors/core/pool_figures.hpp"
#include "actors/core/kv_sequence.hpp"

#include <optional>
#include <vector>

namespace kvactor {

// The cached blocks that can stand in for the leading full blocks of a
// sequence's tokens.
struct prefix_hit {
  std::vector<block_id> blocks;
  int32_t num_queried_blocks = 0; // full blocks that were looked up
};

class block_allocator {
public:
  block_allocator(int32_t num_blocks, int32_t block_size);

  const block_pool& pool() const { return pool_; }
  int32_t block_size() const { return pool_.block_size(); }

  // The longest run of cached blocks matching a sequence that has no KV yet.
  // Never covers the block of the last token, whose logits a step must
  // compute. Changes nothing.
  prefix_hit find_cached_prefix(const kv_sequence& seq) const;

  // Blocks allocate_slots would take from the pool (new blocks, copies, and
  // cached blocks a hit revives).
  int32_t num_blocks_needed(const kv_sequence& seq, int32_t num_new_tokens,
                            const prefix_hit* hit = nullptr) const;
  bool can_allocate_slots(const kv_sequence& seq, int32_t num_new_tokens,
                          const prefix_hit* hit = nullptr) const;
  // Takes the hit (its tokens count as computed), then reserves slots for the
  // next num_new_tokens tokens. A shared block in the range being written is
  // replaced by a private copy; the returned copies must run before the step.
  // nullopt (pool too small) leaves the pool and seq exactly as they were.
  std::optional<std::vector<block_copy>> allocate_slots(kv_sequence& seq, int32_t num_new_tokens,
                                                        const prefix_hit* hit = nullptr);

  // Registers the sequence's computed full blocks in the prefix cache.
  void cache_computed_blocks(kv_sequence& seq);

  // A child with the parent's tokens, KV progress and (shared) blocks.
  kv_sequence fork(const kv_sequence& parent, seq_id child_id);

  // Releases every block of seq; its computed count stays for the caller to
  // keep (swap) or reset (recompute).
  void free(kv_sequence& seq);

  // Fresh blocks for a swapped-out sequence's KV to be copied back into.
  bool allocate_for_swap_in(kv_sequence& seq, int32_t num_blocks);

  pool_figures figures() const;

private:
  void mark_filled(const kv_sequence& seq, int32_t end_token);

  block_pool pool_;
  int64_t num_prefix_queries_ = 0; // full blocks looked up
  int64_t num_prefix_hits_ = 0;    // of which served from the cache
};

} // namespace kvactor
