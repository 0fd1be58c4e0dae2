#pragma once
// kv_ledger: the block manager actor's state — the device block pool and, per
// sequence, what the KV cache holds for it (kv_sequence: tokens, prefix-cache
// keys, block table). The scheduler keeps the sequences' lifecycle, token
// counts and states; the ledger keeps their blocks.
// No CAF in here.
//
// A step's reservation arrives as one list in scheduling order. Entries are
// reserved one after the other, all or nothing each, until one does not fit:
// the reply grants the ones before it and names it, so that the scheduler
// can preempt (or defer) and ask again for the rest.
//
// A grant carries the sequence's block table as a change against the table
// of its last grant (table_delta.hpp): in a decode step usually nothing, or
// the one new block; after a copy-on-write, the table again from the first
// block the step writes. The scheduler passes each grant's change on into
// the step plan unread (it keeps only the number of blocks), so that the
// executor's copy of the table follows the ledger's, the one owner of
// tables, prefix-cache keys and which tokens fill which blocks. After
// release, release_swapped or allocate_for_swap_in, the sequence's next
// grant starts the table over (num_kept 0, the whole table).

#include "actors/core/block_allocator.hpp"
#include "actors/core/reservation.hpp"
#include "actors/core/step.hpp"
#include "actors/core/table_delta.hpp"
#include "actors/core/token_list.hpp"

#include <optional>
#include <unordered_map>
#include <vector>

namespace kvactor {

class kv_ledger {
public:
  // Without prefix caching no block is looked up or registered by content.
  kv_ledger(int32_t num_blocks, int32_t block_size, bool prefix_caching = true);

  reservation_result reserve(const std::vector<reservation_entry>& entries);

  // The device blocks of seq in table order (to swap out).
  std::vector<block_id> blocks_of(seq_id id) const;
  // Releases seq's blocks after a swap-out copy: the K/V live on in host
  // memory, so the computed count stays.
  void release_swapped(seq_id id);
  // Releases seq's blocks for preemption by recompute: its num_computed
  // tokens' full blocks join the prefix cache first, then its progress drops
  // to zero.
  void release(seq_id id, int32_t num_computed);
  // `child` starts as a copy of `parent`: its tokens, progress and blocks
  // (shared: their reference counts go up; the first write copies one).
  void fork(seq_id parent, seq_id child);
  // The sequence has ended: caches its computed full blocks, releases its
  // blocks and its record.
  void forget(seq_id id, int32_t num_computed);
  // Fresh device blocks for a swapped-out sequence (the whole new table);
  // nullopt if short.
  std::optional<std::vector<block_id>> allocate_for_swap_in(seq_id id, int32_t num_blocks);

  const block_allocator& blocks() const { return blocks_; }
  int32_t num_sequences() const { return static_cast<int32_t>(seqs_.size()); }
  pool_figures figures() const;
  // Pool invariants against every table the ledger holds.
  std::vector<std::string> check_invariants() const;

private:
  // A sequence and how much of its table the last grant conveyed.
  struct record {
    kv_sequence seq;
    int32_t num_granted_blocks = 0; // leading blocks the scheduler and executor hold
  };

  record& sync(const reservation_entry& e);
  void note_computed(kv_sequence& seq, int32_t num_computed);

  block_allocator blocks_;
  bool prefix_caching_;
  std::unordered_map<seq_id, record> seqs_;
};

} // namespace kvactor
