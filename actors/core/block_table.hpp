#pragma once
// block_table: the blocks of one sequence, in logical order, and the mapping
//   logical token index t -> (block table[t / block_size], offset t % block_size)
//                         -> flat slot block * block_size + offset
// which the cache-write and attention kernels read.

#include "actors/core/table_delta.hpp"
#include "actors/core/types.hpp"
#include "base/assert.hpp"

#include <span>
#include <vector>

namespace kvactor {

struct slot_location {
  block_id block = no_block;
  int32_t offset = 0;
};

class block_table {
public:
  explicit block_table(int32_t block_size) : block_size_(block_size) {
    KVACTOR_ASSERT(block_size > 0, "block size must be positive");
  }

  int32_t block_size() const { return block_size_; }
  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  bool empty() const { return blocks_.empty(); }
  // Token slots the table's blocks provide.
  int32_t num_slots() const { return num_blocks() * block_size_; }
  std::span<const block_id> blocks() const { return blocks_; }
  block_id operator[](int32_t i) const { return blocks_[i]; }

  // Blocks needed to hold num_tokens tokens, and how many of those are new.
  int32_t num_blocks_for(int32_t num_tokens) const {
    return (num_tokens + block_size_ - 1) / block_size_;
  }
  int32_t num_new_blocks_for(int32_t num_tokens) const {
    int32_t extra = num_blocks_for(num_tokens) - num_blocks();
    return extra > 0 ? extra : 0;
  }

  slot_location locate(int32_t token_index) const {
    KVACTOR_ASSERT(token_index >= 0 && token_index < num_slots(), "token beyond the table");
    return {blocks_[token_index / block_size_], token_index % block_size_};
  }
  slot_id slot(int32_t token_index) const {
    auto [block, offset] = locate(token_index);
    return static_cast<slot_id>(block) * block_size_ + offset;
  }
  // Appends the slots of tokens [begin, end) to out.
  void append_slot_mapping(int32_t begin, int32_t end, std::vector<slot_id>& out) const {
    for (int32_t t = begin; t < end; ++t)
      out.push_back(slot(t));
  }

  void append(block_id b) { blocks_.push_back(b); }
  void replace(int32_t index, block_id b) { blocks_[index] = b; }
  void assign(std::span<const block_id> blocks) { blocks_.assign(blocks.begin(), blocks.end()); }
  void apply(const table_delta& d) { d.apply_to(blocks_); }
  void clear() { blocks_.clear(); }

private:
  int32_t block_size_;
  std::vector<block_id> blocks_;
};

} // namespace kvactor
