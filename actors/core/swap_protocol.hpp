#pragma once
// swap_protocol: the swap actor's order, CAF-free, over its swap_space, so
// that the actor and the core tests' driver follow the same one. The block
// manager hands each swap over with its blocks (a swap-out's device blocks,
// a swap-in's fresh ones; a swap-in short of blocks it refuses itself).
//
//   swap_out(id, blocks)    reserve host blocks, copy device -> host; or,
//                           when the host pool has no room for them, report
//                           swap_out_denied (the scheduler recomputes it)
//   copied_out(id)          have the device blocks freed, then report
//                           swapped_out (the scheduler may reuse them next)
//   swap_in(id, table)      copy host -> device into the fresh table
//   copied_in(id)           free the host blocks, report swapped_in
//   drop_host(id)           free the host blocks of an ended sequence
//
// Each step runs when what it waits for has come; what it sends goes to a
// swap_outbox, in order.

#include "actors/core/step.hpp"
#include "actors/core/swap_space.hpp"

#include <vector>

namespace kvactor {

// Where the swap actor's messages go.
class swap_outbox {
public:
  virtual ~swap_outbox() = default;
  // To the executor: run the copies (answered by copied_out or copied_in).
  virtual void copy(swap_order order) = 0;
  // To the block manager: free id's swapped-out device blocks.
  virtual void free_swapped(seq_id id) = 0;
  // To the scheduler.
  virtual void swap_out_denied(seq_id id) = 0;
  virtual void swapped_out(seq_id id) = 0;
  virtual void swapped_in(seq_id id) = 0;
};

class swap_protocol {
public:
  explicit swap_protocol(int32_t num_host_blocks) : space_(num_host_blocks) {}

  const swap_space& space() const { return space_; }

  void swap_out(seq_id id, const std::vector<block_id>& device_blocks, swap_outbox& out);
  void copied_out(seq_id id, swap_outbox& out);
  void swap_in(seq_id id, const std::vector<block_id>& table, swap_outbox& out);
  void copied_in(seq_id id, swap_outbox& out);
  void drop_host(seq_id id) { space_.release(id); }

private:
  swap_space space_;
};

} // namespace kvactor
