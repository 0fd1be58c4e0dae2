#pragma once
// block_pool: the device KV block pool — metadata only, no KV memory.
//
//   in use (ref_count > 0)       release to 0, never hashed     free_ (FIFO)
//   held by one or more   ───────────────────────────────────►  ─────────────
//   block tables          ── release to 0, hashed ──────────►   cached_ (LRU,
//        ▲                                                       oldest first)
//        └── allocate: free_ first, then evict the head of cached_
//        └── retain: a prefix-cache hit revives a cached block
//
// Full blocks are registered in a prefix cache keyed by (hash, parent hash);
// a lookup compares the stored tokens too, so a hash collision is a miss.
// Running out is a normal result (std::optional); misuse asserts.

#include "actors/core/block_list.hpp"
#include "actors/core/types.hpp"

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace kvactor {

class block_pool {
public:
  block_pool(int32_t num_blocks, int32_t block_size);

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t block_size() const { return block_size_; }
  // Blocks with no holder and no cached content.
  int32_t num_free_blocks() const { return free_.size(); }
  // Blocks with no holder whose content stays in the prefix cache until evicted.
  int32_t num_cached_free_blocks() const { return cached_.size(); }
  // What allocate() can hand out: free plus evictable cached blocks.
  int32_t num_available_blocks() const { return free_.size() + cached_.size(); }
  int32_t num_used_blocks() const { return num_blocks() - num_available_blocks(); }
  bool can_allocate(int32_t n) const { return n <= num_available_blocks(); }

  // n blocks with ref_count 1, all or none. Takes never-hashed blocks first,
  // then evicts least recently released cached blocks.
  std::optional<std::vector<block_id>> allocate(int32_t n);
  // One more block table holds b; revives b if it sat cached with no holder.
  void retain(block_id b);
  // One holder lets go of b.
  void release(block_id b);
  // Releases a sequence's blocks back to front, so that its tail blocks,
  // the least likely to be shared, are evicted first.
  void release(std::span<const block_id> blocks);

  // Registers the full block b under (hash, parent) with its tokens. Returns
  // false, leaving b unhashed, when another block already holds that key.
  bool cache(block_id b, block_hash hash, block_hash parent, std::span<const token_id> tokens);
  // The cached block with this key and exactly these tokens, if any.
  std::optional<block_id> lookup(block_hash hash, block_hash parent,
                                 std::span<const token_id> tokens) const;

  // Slots written (or reserved) in b; kept for the KV-utilisation figure.
  void set_num_filled(block_id b, int32_t num_filled);

  int32_t ref_count(block_id b) const { return blocks_[b].ref_count; }
  int32_t num_filled(block_id b) const { return blocks_[b].num_filled; }
  bool is_hashed(block_id b) const { return blocks_[b].hashed; }
  bool is_free(block_id b) const { return free_.contains(b); }
  bool is_cached_free(block_id b) const { return cached_.contains(b); }
  int64_t num_evictions() const { return num_evictions_; }
  int32_t num_hashed_blocks() const { return static_cast<int32_t>(by_hash_.size()); }
  // Front to back: the order allocate() takes them.
  std::vector<block_id> free_order() const { return free_.to_vector(); }
  std::vector<block_id> eviction_order() const { return cached_.to_vector(); }

private:
  struct block_meta {
    int32_t ref_count = 0;
    int32_t num_filled = 0;
    bool hashed = false;
    block_hash hash = 0;
    block_hash parent = 0;
  };

  void evict(block_id b);
  std::span<const token_id> tokens_of(block_id b) const;

  int32_t block_size_;
  std::vector<block_meta> blocks_;
  std::vector<token_id> tokens_; // [num_blocks, block_size], valid where hashed
  block_list free_;
  block_list cached_;
  std::unordered_map<block_hash, block_id> by_hash_;
  int64_t num_evictions_ = 0;
};

} // namespace kvactor
