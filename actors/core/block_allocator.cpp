#include "actors/core/block_allocator.hpp"

#include "base/assert.hpp"

#include <algorithm>

namespace kvactor {

block_allocator::block_allocator(int32_t num_blocks, int32_t block_size)
  : pool_(num_blocks, block_size) {
}

prefix_hit block_allocator::find_cached_prefix(const kv_sequence& seq) const {
  KVACTOR_ASSERT(seq.table().empty() && seq.num_computed_tokens() == 0,
                 "prefix lookup for a kv_sequence that already has KV");
  const int32_t bs = block_size();
  prefix_hit hit;
  hit.num_queried_blocks = (seq.num_tokens() - 1) / bs;
  auto hashes = seq.block_hashes();
  for (int32_t i = 0; i < hit.num_queried_blocks; ++i) {
    auto b = pool_.lookup(hashes[i], seq.parent_hash(i), seq.tokens().subspan(size_t(i) * bs, bs));
    if (!b)
      break;
    hit.blocks.push_back(*b);
  }
  return hit;
}

int32_t block_allocator::num_blocks_needed(const kv_sequence& seq, int32_t num_new_tokens,
                                         const prefix_hit* hit) const {
  const auto& table = seq.table();
  const int32_t num_hit = hit ? static_cast<int32_t>(hit->blocks.size()) : 0;
  const int32_t begin = seq.num_computed_tokens() + num_hit * block_size();
  const int32_t end = begin + num_new_tokens;
  int32_t need = std::max(0, table.num_blocks_for(end) - (table.num_blocks() + num_hit));
  for (int32_t i = begin / block_size(); i < table.num_blocks(); ++i)
    need += pool_.ref_count(table[i]) > 1; // copy-on-write
  for (int32_t i = 0; i < num_hit; ++i)
    need += pool_.ref_count(hit->blocks[i]) == 0; // revived from the cached list
  return need;
}

bool block_allocator::can_allocate_slots(const kv_sequence& seq, int32_t num_new_tokens,
                                       const prefix_hit* hit) const {
  return pool_.can_allocate(num_blocks_needed(seq, num_new_tokens, hit));
}

std::optional<std::vector<block_copy>> block_allocator::allocate_slots(kv_sequence& seq,
                                                                     int32_t num_new_tokens,
                                                                     const prefix_hit* hit) {
  KVACTOR_ASSERT(num_new_tokens >= 0, "negative token count");
  KVACTOR_ASSERT(!hit || seq.table().empty(), "a prefix hit applies to an empty table only");
  if (!can_allocate_slots(seq, num_new_tokens, hit))
    return std::nullopt;
  auto& table = seq.table();
  const int32_t bs = block_size();
  if (hit) {
    for (block_id b : hit->blocks) {
      pool_.retain(b);
      table.append(b);
    }
    const auto num_hit = static_cast<int32_t>(hit->blocks.size());
    seq.add_computed_tokens(num_hit * bs);
    seq.set_num_cached_blocks(num_hit);
    num_prefix_queries_ += hit->num_queried_blocks;
    num_prefix_hits_ += num_hit;
  }
  const int32_t begin = seq.num_computed_tokens();
  const int32_t end = begin + num_new_tokens;

  std::vector<block_copy> copies;
  for (int32_t i = begin / bs; i < table.num_blocks(); ++i) {
    block_id src = table[i];
    if (pool_.ref_count(src) == 1)
      continue;
    block_id dst = pool_.allocate(1)->front(); // counted in num_blocks_needed
    pool_.set_num_filled(dst, pool_.num_filled(src));
    pool_.release(src);
    table.replace(i, dst);
    copies.push_back({src, dst});
  }
  // Most decode steps stay within the last block: no new one.
  if (const int32_t num_fresh = table.num_new_blocks_for(end); num_fresh > 0) {
    auto fresh = pool_.allocate(num_fresh); // counted in num_blocks_needed
    for (block_id b : *fresh)
      table.append(b);
  }
  mark_filled(seq, end);
  return copies;
}

void block_allocator::mark_filled(const kv_sequence& seq, int32_t end_token) {
  const auto& table = seq.table();
  const int32_t bs = block_size();
  for (int32_t i = seq.num_computed_tokens() / bs; i < table.num_blocks_for(end_token); ++i) {
    int32_t filled = std::min(bs, end_token - i * bs);
    pool_.set_num_filled(table[i], std::max(filled, pool_.num_filled(table[i])));
  }
}

void block_allocator::cache_computed_blocks(kv_sequence& seq) {
  const auto& table = seq.table();
  const int32_t bs = block_size();
  const int32_t num_full = std::min(seq.num_computed_tokens() / bs, table.num_blocks());
  for (int32_t i = seq.num_cached_blocks(); i < num_full; ++i) {
    if (!pool_.is_hashed(table[i]))
      pool_.cache(table[i], seq.block_hashes()[i], seq.parent_hash(i),
                  seq.tokens().subspan(size_t(i) * bs, bs));
  }
  seq.set_num_cached_blocks(std::max(num_full, seq.num_cached_blocks()));
}

kv_sequence block_allocator::fork(const kv_sequence& parent, seq_id child_id) {
  for (block_id b : parent.table().blocks())
    pool_.retain(b);
  return parent.fork(child_id);
}

void block_allocator::free(kv_sequence& seq) {
  pool_.release(seq.table().blocks());
  seq.table().clear();
}

bool block_allocator::allocate_for_swap_in(kv_sequence& seq, int32_t num_blocks) {
  KVACTOR_ASSERT(seq.table().empty(), "swap-in into a kv_sequence that holds blocks");
  auto blocks = pool_.allocate(num_blocks);
  if (!blocks)
    return false;
  seq.table().assign(*blocks);
  seq.set_num_cached_blocks(0); // fresh blocks: re-registered as they are found full
  const int32_t bs = block_size();
  for (int32_t i = 0; i < num_blocks; ++i)
    pool_.set_num_filled((*blocks)[i], std::clamp(seq.num_computed_tokens() - i * bs, 0, bs));
  return true;
}

pool_figures block_allocator::figures() const {
  pool_figures f = measure(pool_);
  f.num_prefix_queries = num_prefix_queries_;
  f.num_prefix_hits = num_prefix_hits_;
  return f;
}

} // namespace kvactor
