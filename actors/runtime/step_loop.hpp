#pragma once
// step_loop: the scheduler actor's state and its step loop — plan a step
// (the reservation round trips to the block manager awaited), run it on the
// executor, dispatch its updates to the request actors, send the
// scheduler's commands, and plan again. The front door (scheduler_actor.cpp)
// admits, cancels and reports into it. Planning a step is atomic; running it
// is not: submits, cancels and swap reports are handled while the executor
// computes.

#include "actors/runtime/spawn.hpp"
#include "actors/runtime/serving_metrics.hpp"

#include <chrono>
#include <optional>
#include <unordered_map>

namespace kvactor::step_loop {

using clock = std::chrono::steady_clock;

// A static batch's wait for more arrivals (scheduler::would_open_a_partial_batch).
enum class batch_window : uint8_t { closed, waiting, passed };

// Where the steps' time goes (see runtime_figures).
struct step_timing {
  clock::time_point step_start;
  double planning_seconds = 0;
  double forward_seconds = 0;
  double sampling_seconds = 0;
  int32_t peak_running = 0;
};

// An admitted request: its actor and how many of its choices (sequences
// sequence_of(id, 0..n-1)) have not ended.
struct live_request {
  request_actor actor;
  int32_t num_choices = 1;
  int32_t num_live = 1;
};

struct scheduler_actor_state {
  scheduler_actor_state() = default;
  std::optional<scheduler_parts> parts;
  std::optional<scheduler> sched;
  std::unordered_map<request_id, live_request> requests;
  request_id next_id = 1;
  bool planning = false;
  batch_window window = batch_window::closed;
  step_timing timing;
  serving_metrics metrics; // requests, tokens, steps and their latencies
  std::optional<caf::typed_response_promise<bool>> shutdown;
  // The device's fault: every request has ended with it, new ones are refused.
  std::optional<std::string> device_fault;
};

using self_ptr = scheduler_actor::stateful_pointer<scheduler_actor_state>;

double seconds_since(clock::time_point t);

// Plans the next step unless one is being planned or run.
void kick(self_ptr self);
// Sends the updates to their request actors, then the scheduler's commands.
void dispatch(self_ptr self, const std::vector<sequence_update>& updates);
// Once shutting down and idle: ends the other actors, answers, quits.
void maybe_finish_shutdown(self_ptr self);
// Its own timer: a static batch's window for arrivals has passed.
void window_passed(self_ptr self);
// The executor's answer to a step was an error: the device failed. Every
// request ends with finish_reason error, and the runtime serves no more.
void device_failed(self_ptr self, const caf::error& err);

} // namespace kvactor::step_loop
