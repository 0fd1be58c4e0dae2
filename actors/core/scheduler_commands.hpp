#pragma once
// The scheduler's commands to the block manager and the swap actor, and
// their delivery: deliver() hands each to its receiver's verb, in order, the
// block commands first. The scheduler actor's receivers send messages; the
// core tests' receivers call the ledger and the swap space directly, so both
// go through the same delivery.

#include "actors/core/types.hpp"

#include <vector>

namespace kvactor {

// Work the scheduler hands to the block manager, in order.
struct block_command {
  enum kind_t : uint8_t {
    release, // free the blocks, drop the progress (recompute)
    forget,  // the sequence ended
    fork     // `child` starts as a copy of `id`, sharing its blocks
  };
  kind_t kind = release;
  seq_id id = 0;
  int32_t num_computed = 0; // release, forget: computed tokens, to cache full blocks first
  seq_id child = 0;         // fork: the new sequence
  friend bool operator==(const block_command&, const block_command&) = default;
};

// Swaps, in order: out and in through the block manager, which adds their
// blocks and hands them to the swap actor; drop_host to the swap actor.
struct swap_command {
  enum kind_t : uint8_t {
    swap_out, // copy to host, then have the device blocks freed
    swap_in,  // get num_blocks device blocks, copy back
    drop_host // free the host blocks of an ended sequence
  };
  kind_t kind = swap_out;
  seq_id id = 0;
  int32_t num_blocks = 0; // swap_in: blocks to get back
  friend bool operator==(const swap_command&, const swap_command&) = default;
};

// The commands issued since they were last taken, for each receiver.
struct scheduler_commands {
  std::vector<block_command> blocks;
  std::vector<swap_command> swaps;
};

// What the commands are delivered to.
class command_receivers {
public:
  virtual ~command_receivers() = default;
  // The block manager's.
  virtual void release(seq_id id, int32_t num_computed) = 0;
  virtual void forget(seq_id id, int32_t num_computed) = 0;
  virtual void fork(seq_id first, seq_id child) = 0;
  // Swaps: the block manager's (it hands them on with their blocks) ...
  virtual void swap_out(seq_id id) = 0;
  virtual void swap_in(seq_id id, int32_t num_blocks) = 0;
  // ... and the swap actor's.
  virtual void drop_host(seq_id id) = 0;
};

void deliver(const scheduler_commands& commands, command_receivers& to);

} // namespace kvactor
