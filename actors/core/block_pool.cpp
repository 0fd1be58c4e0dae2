#include "actors/core/block_pool.hpp"

#include "base/assert.hpp"

#include <algorithm>
#include <ranges>

namespace kvactor {

block_pool::block_pool(int32_t num_blocks, int32_t block_size)
  : block_size_(block_size),
    blocks_(num_blocks),
    tokens_(static_cast<size_t>(num_blocks) * block_size),
    free_(num_blocks),
    cached_(num_blocks) {
  KVACTOR_ASSERT(num_blocks > 0 && block_size > 0, "a pool needs blocks of at least one slot");
  for (block_id b = 0; b < num_blocks; ++b)
    free_.push_back(b);
}

std::optional<std::vector<block_id>> block_pool::allocate(int32_t n) {
  KVACTOR_ASSERT(n >= 0, "negative block count");
  if (!can_allocate(n))
    return std::nullopt;
  std::vector<block_id> out;
  out.reserve(n);
  for (int32_t i = 0; i < n; ++i) {
    block_id b;
    if (!free_.empty()) {
      b = free_.pop_front();
    } else {
      b = cached_.pop_front();
      evict(b);
    }
    blocks_[b].ref_count = 1;
    blocks_[b].num_filled = 0;
    out.push_back(b);
  }
  return out;
}

void block_pool::evict(block_id b) {
  auto& meta = blocks_[b];
  by_hash_.erase(meta.hash);
  meta.hashed = false;
  ++num_evictions_;
}

void block_pool::retain(block_id b) {
  auto& meta = blocks_[b];
  if (meta.ref_count == 0) {
    KVACTOR_ASSERT(cached_.contains(b), "retain of a free, uncached block");
    cached_.remove(b);
  }
  ++meta.ref_count;
}

void block_pool::release(block_id b) {
  auto& meta = blocks_[b];
  KVACTOR_ASSERT(meta.ref_count > 0, "release of a block nobody holds");
  if (--meta.ref_count > 0)
    return;
  (meta.hashed ? cached_ : free_).push_back(b);
}

void block_pool::release(std::span<const block_id> blocks) {
  for (block_id b : std::views::reverse(blocks))
    release(b);
}

bool block_pool::cache(block_id b, block_hash hash, block_hash parent,
                       std::span<const token_id> tokens) {
  auto& meta = blocks_[b];
  KVACTOR_ASSERT(meta.ref_count > 0, "only a held block can be cached");
  KVACTOR_ASSERT(!meta.hashed, "block already cached");
  KVACTOR_ASSERT(static_cast<int32_t>(tokens.size()) == block_size_, "only full blocks are cached");
  if (!by_hash_.emplace(hash, b).second)
    return false;
  meta.hashed = true;
  meta.hash = hash;
  meta.parent = parent;
  std::ranges::copy(tokens, tokens_.begin() + static_cast<ptrdiff_t>(b) * block_size_);
  return true;
}

std::optional<block_id> block_pool::lookup(block_hash hash, block_hash parent,
                                           std::span<const token_id> tokens) const {
  auto i = by_hash_.find(hash);
  if (i == by_hash_.end())
    return std::nullopt;
  block_id b = i->second;
  if (blocks_[b].parent != parent || !std::ranges::equal(tokens_of(b), tokens))
    return std::nullopt;
  return b;
}

void block_pool::set_num_filled(block_id b, int32_t num_filled) {
  KVACTOR_ASSERT(num_filled >= 0 && num_filled <= block_size_, "fill beyond the block");
  blocks_[b].num_filled = num_filled;
}

std::span<const token_id> block_pool::tokens_of(block_id b) const {
  return {tokens_.data() + static_cast<ptrdiff_t>(b) * block_size_,
          static_cast<size_t>(block_size_)};
}

} // namespace kvactor
