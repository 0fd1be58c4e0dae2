#pragma once
// Invariant checks for the block pools, for tests and for the block manager
// at idle. Each returns one line per broken invariant; empty means sound.

#include "actors/core/block_pool.hpp"
#include "actors/core/block_table.hpp"
#include "actors/core/swap_space.hpp"

#include <span>
#include <string>
#include <vector>

namespace kvactor {

// Device pool: every block is exactly one of used, free or cached-free, and
// the lists' sizes agree; every reference count equals the number of tables
// holding the block; free blocks carry no prefix-cache entry and cached-free
// ones do; no table holds a block twice.
std::vector<std::string> check_invariants(const block_pool& pool,
                                          std::span<const block_table* const> tables);

// Host pool: every block is free or held by exactly one swapped sequence.
std::vector<std::string> check_invariants(const swap_space& space);

} // namespace kvactor
