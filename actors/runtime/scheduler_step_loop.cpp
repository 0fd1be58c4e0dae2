// The scheduler actor's step loop (scheduler_actor.hpp): plan, reserve,
// run on the executor, dispatch, plan again.

#include "actors/runtime/scheduler_actor.hpp"

#include <cstdio>

namespace kvactor {

namespace {

// NOTE: how long a static batch waits for arrivals before it opens short of
// full; a burst of requests sent at once reaches the scheduler over some
// milliseconds, each through its own request actor.
constexpr auto batch_window_length = std::chrono::milliseconds(50);

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

void scheduler_actor_state::kick() {
  if (planning_ || sched_->step_in_flight() || device_fault_)
    return;
  if (sched_->would_open_a_partial_batch() && window_ != batch_window::passed && !shutdown_) {
    if (window_ == batch_window::closed) {
      window_ = batch_window::waiting;
      self_->delayed_send(self_, batch_window_length, window_atom::value);
    }
    return;
  }
  window_ = batch_window::closed;
  planning_ = true;
  timing_.step_start = clock::now();
  continue_planning(sched_->begin_step());
}

void scheduler_actor_state::window_passed() {
  if (window_ == batch_window::waiting) // else a full batch opened meanwhile
    window_ = batch_window::passed;
  kick();
}

void scheduler_actor_state::continue_planning(scheduler::planning p) {
  run_commands();
  if (!p.plan) {
    self_->request(parts_->blocks, caf::infinite, reserve_atom::value, std::move(p.reserve))
      .await([this](const reservation_result& r) { continue_planning(sched_->on_reservation(r)); });
    return;
  }
  planning_ = false;
  if (p.plan->seqs.empty()) {
    maybe_finish_shutdown();
    return;
  }
  timing_.planning_seconds += seconds_since(timing_.step_start);
  const auto now = clock::now();
  for (const auto& s : p.plan->seqs)
    metrics_.scheduled(s.id, now);
  self_->request(parts_->executor, caf::infinite, std::move(*p.plan))
    .then([this](const step_output& out) { on_output(out); },
          [this](const caf::error& err) { device_failed(err); });
}

void scheduler_actor_state::on_output(const step_output& out) {
  dispatch(sched_->update_from_output(out));
  metrics_.stepped(seconds_since(timing_.step_start));
  timing_.forward_seconds += out.forward_seconds;
  timing_.sampling_seconds += out.sampling_seconds;
  timing_.peak_running = std::max(timing_.peak_running, sched_->num_running());
  kick();
}

void scheduler_actor_state::dispatch(const std::vector<sequence_update>& updates) {
  const auto now = clock::now();
  for (const auto& u : updates) {
    auto i = requests_.find(request_of(u.id));
    if (i == requests_.end())
      continue;
    self_->send(i->second.actor, u);
    if (u.token != no_token)
      metrics_.produced(u.id, now);
    if (u.finished != finish_reason::none) {
      metrics_.ended(u.id, u.finished == finish_reason::aborted, now);
      if (--i->second.num_live == 0)
        requests_.erase(i);
    }
  }
  run_commands();
}

namespace {

// The commands' receivers: the block manager (swaps too: it adds their
// blocks and hands them to the swap actor) and the swap actor, by message.
class by_message final : public command_receivers {
public:
  by_message(scheduler_actor::pointer self, const scheduler_parts& parts)
    : self_(self), parts_(parts) {}
  void release(seq_id id, int32_t n) override {
    self_->send(parts_.blocks, release_atom::value, id, n);
  }
  void forget(seq_id id, int32_t n) override {
    self_->send(parts_.blocks, forget_atom::value, id, n);
  }
  void fork(seq_id first, seq_id child) override {
    self_->send(parts_.blocks, fork_atom::value, first, child);
  }
  void swap_out(seq_id id) override { self_->send(parts_.blocks, swap_out_atom::value, id); }
  void swap_in(seq_id id, int32_t n) override {
    self_->send(parts_.blocks, swap_in_atom::value, id, n);
  }
  void drop_host(seq_id id) override { self_->send(parts_.swap, drop_host_atom::value, id); }

private:
  scheduler_actor::pointer self_;
  const scheduler_parts& parts_;
};

} // namespace

void scheduler_actor_state::run_commands() {
  by_message receivers(self_, *parts_);
  deliver(sched_->take_commands(), receivers);
}

void scheduler_actor_state::maybe_finish_shutdown() {
  if (!shutdown_ || sched_->has_work() || sched_->step_in_flight() || planning_)
    return;
  self_->send_exit(parts_->swap, caf::exit_reason::user_shutdown);
  self_->send_exit(parts_->blocks, caf::exit_reason::user_shutdown);
  self_->send_exit(parts_->executor, caf::exit_reason::user_shutdown);
  shutdown_->deliver(true);
  self_->quit();
}

void scheduler_actor_state::device_failed(const caf::error& err) {
  if (device_fault_)
    return;
  device_fault_ = message_of(err);
  std::fprintf(stderr, "kvactor: the device failed, every request ends: %s\n",
               device_fault_->c_str());
  // NOTE: the commands of the failed scheduler would go to a block manager
  // and a swap actor that serve nothing more; fail_all leaves none.
  dispatch(sched_->fail_all(*device_fault_));
  maybe_finish_shutdown();
}

} // namespace kvactor
