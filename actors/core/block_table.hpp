#pragma once
// block_table: the blocks of one sequence, in logical order; token t lies in
// block table[t / block_size] at offset t % block_size. The ledger's copy is
// the one owner; the executor follows it through table_delta. (The flat slot
// mapping the kernels read is built from the executor's copy, in
// model/forward/batch.cpp.)

#include "actors/core/table_delta.hpp"
#include "actors/core/types.hpp"
#include "base/assert.hpp"

#include <span>
#include <vector>

namespace kvactor {

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
