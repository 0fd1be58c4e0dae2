#pragma once
// block_list: an intrusive doubly linked list of block ids with O(1)
// push_back, pop_front, remove and membership test. The pool keeps its free
// blocks and its cached-but-unused blocks (LRU order) in two of these.

#include "actors/core/types.hpp"
#include "base/assert.hpp"

#include <vector>

namespace kvactor {

class block_list {
public:
  explicit block_list(int32_t num_blocks)
    : prev_(num_blocks, no_block), next_(num_blocks, no_block), linked_(num_blocks, false) {
  }

  int32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(block_id b) const { return linked_[b]; }
  block_id front() const { return head_; }
  block_id next(block_id b) const { return next_[b]; }

  void push_back(block_id b) {
    KVACTOR_ASSERT(!linked_[b], "block already in this list");
    prev_[b] = tail_;
    next_[b] = no_block;
    (tail_ == no_block ? head_ : next_[tail_]) = b;
    tail_ = b;
    linked_[b] = true;
    ++size_;
  }

  void remove(block_id b) {
    KVACTOR_ASSERT(linked_[b], "block not in this list");
    (prev_[b] == no_block ? head_ : next_[prev_[b]]) = next_[b];
    (next_[b] == no_block ? tail_ : prev_[next_[b]]) = prev_[b];
    prev_[b] = next_[b] = no_block;
    linked_[b] = false;
    --size_;
  }

  block_id pop_front() {
    KVACTOR_ASSERT(head_ != no_block, "pop_front on an empty list");
    block_id b = head_;
    remove(b);
    return b;
  }

  // The ids front to back (for tests, figures and invariant checks).
  std::vector<block_id> to_vector() const {
    std::vector<block_id> out;
    out.reserve(size_);
    for (block_id b = head_; b != no_block; b = next_[b])
      out.push_back(b);
    return out;
  }

private:
  std::vector<block_id> prev_;
  std::vector<block_id> next_;
  std::vector<bool> linked_;
  block_id head_ = no_block;
  block_id tail_ = no_block;
  int32_t size_ = 0;
};

} // namespace kvactor
