#pragma once
// in_process_driver: sends a workload to a runtime in this actor system —
// one sink actor per request, cancels from the sinks at the planned token,
// forced preemptions every K steps (alternating swap and recompute) — and
// reads the runtime's figures once it is idle.

#include "tools/runtime_calls.hpp"
#include "tools/stress/checker.hpp"
#include "tools/stress/fault_plan.hpp"
#include "tools/stress/progress.hpp"
#include "tools/stress/record_book.hpp"

#include <memory>
#include "tools/stress/workload.hpp"

#include <optional>

namespace kvactor::stress {

using tools::figures_of;

struct drive_options {
  int32_t preempt_every = 0;
  double timeout_s = 600; // for every request to end
  double stall_s = 60;    // without any event: the runtime stalled, stop waiting
};

// Runs the workload to its end; the figures after idle (nullopt if the
// runtime did not answer).
std::optional<end_state> drive_in_process(caf::actor_system& sys, runtime_actor runtime,
                                          const std::vector<stress_request>& workload,
                                          const std::vector<request_faults>& plan,
                                          const drive_options& options,
                                          const std::shared_ptr<record_book>& book,
                                          progress& bar);

// Polls the figures until the runtime is idle (or a few seconds passed).
std::optional<end_state> wait_idle(caf::actor_system& sys, runtime_actor runtime);

} // namespace kvactor::stress
