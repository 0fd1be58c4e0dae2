#pragma once
// swap_space: bookkeeping for the pinned host block pool that preempted
// sequences are swapped out to. The state class of swap_actor; no CAF here.
//
//   swap_out(seq, device blocks)   host blocks reserved, copies device -> host
//   ... copy done: the device blocks are released by the block manager ...
//   swap_in(seq, new device blocks) copies host -> device, same order
//   ... copy done: release(seq) returns the host blocks ...
// A sequence aborted while swapped just calls release(seq).

#include "actors/core/types.hpp"

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace kvactor {

class swap_space {
public:
  explicit swap_space(int32_t num_blocks);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_free_blocks() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_used_blocks() const { return num_blocks_ - num_free_blocks(); }
  int32_t num_sequences() const { return static_cast<int32_t>(held_.size()); }
  bool can_swap_out(int32_t num_device_blocks) const {
    return num_device_blocks <= num_free_blocks();
  }

  // Reserves one host block per device block of seq, all or none, and
  // returns the copies (src: device block, dst: host block) in table order.
  std::optional<std::vector<block_copy>> swap_out(seq_id seq,
                                                  std::span<const block_id> device_blocks);
  bool holds(seq_id seq) const { return held_.contains(seq); }
  // The host blocks of seq in table order.
  std::span<const block_id> host_blocks(seq_id seq) const;
  // The copies (src: host block, dst: device block) that bring seq back into
  // device_blocks, which must be as many as it swapped out.
  std::vector<block_copy> swap_in(seq_id seq, std::span<const block_id> device_blocks) const;
  // Returns seq's host blocks to the pool.
  void release(seq_id seq);

  // For invariant checks: the free host blocks and the sequences held.
  std::span<const block_id> free_blocks() const { return free_; }
  std::vector<seq_id> sequences() const;

private:
  int32_t num_blocks_;
  std::vector<block_id> free_; // a stack: the most recently freed first
  std::unordered_map<seq_id, std::vector<block_id>> held_;
};

} // namespace kvactor
