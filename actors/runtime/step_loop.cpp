#include "actors/runtime/step_loop.hpp"

namespace kvactor::step_loop {

namespace {

// NOTE: how long a static batch waits for arrivals before it opens short of
// full; a burst of requests sent at once reaches the scheduler over some
// milliseconds, each through its own request actor.
constexpr auto batch_window_length = std::chrono::milliseconds(50);

// The scheduler's commands, as typed messages to their receivers, in order.
void run_commands(self_ptr self) {
  const auto& parts = *self->state.parts;
  const scheduler_commands commands = self->state.sched->take_commands();
  for (const block_command& c : commands.blocks) {
    switch (c.kind) {
      case block_command::release:
        self->send(parts.blocks, release_atom::value, c.id, c.num_computed);
        break;
      case block_command::forget:
        self->send(parts.blocks, forget_atom::value, c.id, c.num_computed);
        break;
      case block_command::fork: self->send(parts.blocks, fork_atom::value, c.id, c.child); break;
    }
  }
  for (const swap_command& c : commands.swaps) {
    switch (c.kind) {
      case swap_command::swap_out: self->send(parts.swap, swap_out_atom::value, c.id); break;
      case swap_command::swap_in:
        self->send(parts.swap, swap_in_atom::value, c.id, c.num_blocks);
        break;
      case swap_command::drop_host: self->send(parts.swap, drop_host_atom::value, c.id); break;
    }
  }
}

void on_output(self_ptr self, const step_output& out) {
  auto& st = self->state;
  dispatch(self, st.sched->update_from_output(out));
  st.metrics.stepped(seconds_since(st.timing.step_start));
  st.timing.forward_seconds += out.forward_seconds;
  st.timing.sampling_seconds += out.sampling_seconds;
  st.timing.peak_running = std::max(st.timing.peak_running, st.sched->num_running());
  kick(self);
}

void continue_planning(self_ptr self, scheduler::planning p) {
  auto& st = self->state;
  run_commands(self);
  if (!p.plan) {
    self->request(st.parts->blocks, caf::infinite, reserve_atom::value, std::move(p.reserve))
      .await([=](const reservation_result& r) {
        continue_planning(self, self->state.sched->on_reservation(r));
      });
    return;
  }
  st.planning = false;
  if (p.plan->seqs.empty()) {
    maybe_finish_shutdown(self);
    return;
  }
  st.timing.planning_seconds += seconds_since(st.timing.step_start);
  const auto now = clock::now();
  for (const auto& s : p.plan->seqs)
    st.metrics.scheduled(s.id, now);
  self->request(st.parts->executor, caf::infinite, std::move(*p.plan))
    .then([=](const step_output& out) { on_output(self, out); },
          [=](const caf::error& err) { device_failed(self, err); });
}

} // namespace

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

void kick(self_ptr self) {
  auto& st = self->state;
  if (st.planning || st.sched->step_in_flight() || st.device_fault)
    return;
  if (st.sched->would_open_a_partial_batch() && st.window != batch_window::passed && !st.shutdown) {
    if (st.window == batch_window::closed) {
      st.window = batch_window::waiting;
      self->delayed_send(self, batch_window_length, window_atom::value);
    }
    return;
  }
  st.window = batch_window::closed;
  st.planning = true;
  st.timing.step_start = clock::now();
  continue_planning(self, st.sched->begin_step());
}

void dispatch(self_ptr self, const std::vector<sequence_update>& updates) {
  auto& st = self->state;
  const auto now = clock::now();
  for (const auto& u : updates) {
    auto i = st.requests.find(request_of(u.id));
    if (i == st.requests.end())
      continue;
    self->send(i->second.actor, u);
    if (u.token != no_token)
      st.metrics.produced(u.id, now);
    if (u.finished != finish_reason::none) {
      st.metrics.ended(u.id, u.finished == finish_reason::aborted, now);
      if (--i->second.num_live == 0)
        st.requests.erase(i);
    }
  }
  run_commands(self);
}

void maybe_finish_shutdown(self_ptr self) {
  auto& st = self->state;
  if (!st.shutdown || st.sched->has_work() || st.sched->step_in_flight() || st.planning)
    return;
  const auto& parts = *st.parts;
  self->send_exit(parts.swap, caf::exit_reason::user_shutdown);
  self->send_exit(parts.blocks, caf::exit_reason::user_shutdown);
  self->send_exit(parts.executor, caf::exit_reason::user_shutdown);
  st.shutdown->deliver(true);
  self->quit();
}

void device_failed(self_ptr self, const caf::error& err) {
  auto& st = self->state;
  if (st.device_fault)
    return;
  st.device_fault = message_of(err);
  std::fprintf(stderr, "kvactor: the device failed, every request ends: %s\n",
               st.device_fault->c_str());
  // NOTE: the commands of the failed scheduler would go to a block manager
  // and a swap actor that serve nothing more; fail_all leaves none.
  dispatch(self, st.sched->fail_all(*st.device_fault));
  maybe_finish_shutdown(self);
}

void window_passed(self_ptr self) {
  auto& st = self->state;
  if (st.window == batch_window::waiting) // else a full batch opened meanwhile
    st.window = batch_window::passed;
  kick(self);
}

} // namespace kvactor::step_loop
