#pragma once
// scheduler_actor's state: the scheduler (actors/core/scheduler.hpp) and the
// step loop around it — plan a step (the reservation round trips to the
// block manager awaited), run it on the executor, send its updates to the
// request actors and the scheduler's commands to the block manager and the
// swap actor, and plan again. Planning a step is atomic; running it is not:
// submits, cancels and swap reports are handled while the executor computes.
// The actor's behaviour (scheduler_actor.cpp) only calls these methods.

#include "actors/core/scheduler.hpp"
#include "actors/runtime/serving_metrics.hpp"
#include "actors/runtime/spawn.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvactor {

class scheduler_actor_state {
public:
  using clock = std::chrono::steady_clock;
  using self_ptr = scheduler_actor::pointer;

  scheduler_actor_state() = default;
  // Once, when the actor starts.
  void init(self_ptr self, scheduler_parts parts);

  // The handlers (interfaces.hpp says what each message means).
  admission submit(submission s, request_actor actor);
  void stop(seq_id id, finish_reason why);
  void cancel(request_id id);
  void preempt(request_id id, bool by_swap);
  scheduler_figures figures() const;
  caf::typed_response_promise<bool> shutdown();
  void swap_out_denied(seq_id id);
  void swapped_out(seq_id id);
  void swapped_in(seq_id id);
  void swap_in_denied(seq_id id);
  void window_passed();

private:
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

  // What every handler that changed the scheduler does next: sends the
  // updates and commands, plans the next step if none runs, and finishes a
  // shutdown once idle.
  void settle(const std::vector<sequence_update>& updates);
  // A swap's report (`report`: the scheduler's method for it), settled
  // unless a device fault has ended every sequence.
  void swap_report(std::vector<sequence_update> (scheduler::*report)(seq_id), seq_id id);
  // Ends every choice of a request (the ones still to fork end with the first).
  void end_request(request_id id);

  // The step loop (scheduler_step_loop.cpp).
  void kick();
  void continue_planning(scheduler::planning p);
  void on_output(const step_output& out);
  void dispatch(const std::vector<sequence_update>& updates);
  void run_commands();
  void maybe_finish_shutdown();
  // The executor's answer to a step was an error: the device failed. Every
  // request ends with finish_reason error, and the runtime serves no more.
  void device_failed(const caf::error& err);

  self_ptr self_ = nullptr;
  std::optional<scheduler_parts> parts_;
  std::optional<scheduler> sched_;
  std::unordered_map<request_id, live_request> requests_;
  bool planning_ = false;
  batch_window window_ = batch_window::closed;
  step_timing timing_;
  serving_metrics metrics_; // requests, tokens, steps and their latencies
  std::optional<caf::typed_response_promise<bool>> shutdown_;
  // The device's fault: every request has ended with it, new ones are refused.
  std::optional<std::string> device_fault_;
};

} // namespace kvactor
