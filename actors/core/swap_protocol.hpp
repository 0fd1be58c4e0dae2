#pragma once
// swap_protocol: the swap actor's order, CAF-free, over its swap_space, so
// that the actor and the core tests' driver follow the same one.
//
//   swap_out(id)            ask the block manager for id's device blocks
//   blocks_known(id, bs)    reserve host blocks, copy device -> host
//   copied_out(id)          have the device blocks freed, then report
//                           swapped_out (the scheduler may reuse them next)
//   swap_in(id, n)          ask the block manager for n fresh device blocks
//   allocated(id, table)    none: report swap_in_denied; else copy host -> device
//   copied_in(id)           free the host blocks, report swapped_in
//   drop_host(id)           free the host blocks of an ended sequence
//
// Each step runs when what it waits for has come; what it sends goes to a
// swap_outbox, in order.

#include "actors/core/step.hpp"
#include "actors/core/swap_space.hpp"

#include <optional>
#include <vector>

namespace kvactor {

// Where the swap actor's messages go.
class swap_outbox {
public:
  virtual ~swap_outbox() = default;
  // To the block manager: id's device blocks (answered by blocks_known),
  // fresh blocks for id (answered by allocated), free id's swapped-out blocks.
  virtual void ask_blocks(seq_id id) = 0;
  virtual void allocate(seq_id id, int32_t num_blocks) = 0;
  virtual void free_swapped(seq_id id) = 0;
  // To the executor: run the copies (answered by copied_out or copied_in).
  virtual void copy(swap_order order) = 0;
  // To the scheduler.
  virtual void swapped_out(seq_id id) = 0;
  virtual void swapped_in(seq_id id) = 0;
  virtual void swap_in_denied(seq_id id) = 0;
};

class swap_protocol {
public:
  explicit swap_protocol(int32_t num_host_blocks) : space_(num_host_blocks) {}

  const swap_space& space() const { return space_; }

  void swap_out(seq_id id, swap_outbox& out) { out.ask_blocks(id); }
  void blocks_known(seq_id id, const std::vector<block_id>& device_blocks, swap_outbox& out);
  void copied_out(seq_id id, swap_outbox& out);
  void swap_in(seq_id id, int32_t num_blocks, swap_outbox& out) { out.allocate(id, num_blocks); }
  void allocated(seq_id id, const std::optional<std::vector<block_id>>& table, swap_outbox& out);
  void copied_in(seq_id id, swap_outbox& out);
  void drop_host(seq_id id) { space_.release(id); }

private:
  swap_space space_;
};

} // namespace kvactor
