#pragma once
// kv_sequence: what the KV cache holds for one sequence — its tokens, how
// many of them have K/V in the cache, the prefix-cache key of each full
// block, and its block table. The kv_ledger's record and the block
// manager's operand; the scheduler keeps only the lifecycle (sequence.hpp).

#include "actors/core/block_table.hpp"
#include "actors/core/types.hpp"

#include <span>
#include <vector>

namespace kvactor {

class kv_sequence {
public:
  kv_sequence(seq_id id, std::vector<token_id> tokens, int32_t block_size);

  // A copy under a new id: same tokens, progress and block table (whose
  // blocks the caller must retain; see block_allocator::fork).
  kv_sequence fork(seq_id child_id) const;

  seq_id id() const { return id_; }
  std::span<const token_id> tokens() const { return tokens_; }
  int32_t num_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  void append_token(token_id t);

  // Tokens whose K/V are in the cache; the rest still need a forward pass.
  int32_t num_computed_tokens() const { return num_computed_tokens_; }
  int32_t num_uncomputed_tokens() const { return num_tokens() - num_computed_tokens_; }
  void add_computed_tokens(int32_t n);
  // Drops all KV progress (preemption by recompute); the table must have
  // been released first.
  void reset_computed();

  // The prefix-cache key of each full block of tokens(), chained from the
  // first: block_hashes()[i] covers tokens [0, (i + 1) * block_size).
  std::span<const block_hash> block_hashes() const { return block_hashes_; }
  block_hash parent_hash(int32_t block_index) const;
  // Leading blocks of the table registered in (or taken from) the prefix cache.
  int32_t num_cached_blocks() const { return num_cached_blocks_; }
  void set_num_cached_blocks(int32_t n) { num_cached_blocks_ = n; }

  block_table& table() { return table_; }
  const block_table& table() const { return table_; }

private:
  void hash_full_blocks();

  seq_id id_;
  std::vector<token_id> tokens_;
  int32_t num_computed_tokens_ = 0;
  std::vector<block_hash> block_hashes_;
  int32_t num_cached_blocks_ = 0;
  block_table table_;
};

} // namespace kvactor
