#pragma once
// table_delta: how a sequence's block table changed since its holder last
// saw it. Tables travel in this form from the block manager to the scheduler
// (grants) and from the scheduler to the executor (step plans), so that a
// step costs what changed, not the length of every table.
//
//   table' = table[0, num_kept) ++ added
//
//   decode within the last block:   num_kept = size, added = {}
//   decode into a new block:        num_kept = size, added = {b}
//   copy-on-write of block i:       num_kept <= i,   added = the rest from there
//   new table (resets()):           num_kept = 0,    added = the whole table
//
// A table starts over on a sequence's first step and on its first step after
// a swap-in into new blocks or a preemption by recompute (where a prefix-cache
// hit may serve its start again).

#include "actors/core/types.hpp"
#include "base/assert.hpp"

#include <vector>

namespace kvactor {

struct table_delta {
  int32_t num_kept = 0;        // leading blocks of the holder's table that stay
  std::vector<block_id> added; // the blocks after them, in table order

  bool resets() const { return num_kept == 0; }

  // Applies the change to a holder's copy, which must have num_kept blocks.
  void apply_to(std::vector<block_id>& table) const {
    KVACTOR_ASSERT(num_kept >= 0 && size_t(num_kept) <= table.size(),
                   "a table delta keeps more blocks than the table has");
    if (added.empty() && size_t(num_kept) == table.size())
      return; // most decode steps
    table.resize(size_t(num_kept));
    table.insert(table.end(), added.begin(), added.end());
  }

  friend bool operator==(const table_delta&, const table_delta&) = default;
};

} // namespace kvactor
