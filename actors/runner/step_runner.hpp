#pragma once
// step_runner: what the executor actor drives — a model on a device. Every
// call only enqueues work and returns at once; `done` runs later on a device
// thread and must only hand the result to an actor (anon_send) and return.
// No CAF in here.

#include "actors/core/step.hpp"

#include <functional>
#include <string>
#include <vector>

namespace kvactor {

class step_runner {
public:
  virtual ~step_runner() = default;

  // One forward pass: copy-on-write copies first, then K/V of the plan's
  // tokens into the cache, then a token for each sequence that samples.
  // Plans come one at a time, in order: the runner keeps each live
  // sequence's block table, applies the plan's table changes to it and drops
  // the tables of the `released` sequences (step.hpp).
  virtual void run(step_plan plan, std::function<void(step_output)> done) = 0;

  // Copies blocks between the device pool and the pinned host pool on the
  // swap stream of `direction` (out: device -> host, in: host -> device),
  // concurrently with steps.
  virtual void swap(swap_direction direction, std::vector<block_copy> copies,
                    std::function<void()> done) = 0;

  // Who hears, once, that the device has failed (a CUDA fault: its name and
  // text): the steps and swaps in flight then never complete. Set before the
  // first step; called on a device thread, it must only message an actor.
  virtual void set_fault_handler(std::function<void(const std::string&)> handler) = 0;

  // Pool sizes, fixed at start.
  virtual int32_t num_device_blocks() const = 0;
  virtual int32_t num_host_blocks() const = 0;
  virtual int32_t block_size() const = 0;
};

} // namespace kvactor
