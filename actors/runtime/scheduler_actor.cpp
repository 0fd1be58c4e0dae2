// scheduler_actor: admission, ends, cancels, forced preemptions, figures,
// shutdown and the swap actor's reports, each a method of the state
// (scheduler_actor.hpp); the step loop is in scheduler_step_loop.cpp.

#include "actors/runtime/scheduler_actor.hpp"

namespace kvactor {

void scheduler_actor_state::init(self_ptr self, scheduler_parts parts) {
  self_ = self;
  sched_.emplace(parts.config, parts.num_device_blocks, parts.num_host_blocks, parts.block_size);
  self->send(parts.swap, attach_atom::value, scheduler_actor{self});
  self->send(parts.blocks, attach_atom::value, parts.swap, scheduler_actor{self});
  parts_.emplace(std::move(parts));
}

admission scheduler_actor_state::submit(submission s, request_actor actor) {
  const auto n = static_cast<int32_t>(s.prompt.size());
  if (device_fault_)
    return {s.id, n, errc::device_unusable, "the device failed: " + *device_fault_};
  if (shutdown_)
    return {s.id, n, errc::overloaded, "the runtime is shutting down"};
  if (sched_->num_waiting() >= parts_->max_waiting)
    return {s.id, n, errc::overloaded,
            "the waiting queue is full (" + std::to_string(parts_->max_waiting) + ")"};
  if (s.num_choices > 1 && !sched_->forks())
    return {s.id, n, errc::invalid_field, "n > 1 needs continuous batching and paged KV blocks"};
  const seq_id first = sequence_of(s.id, 0);
  sequence seq(first, std::move(s.prompt), s.priority, first);
  if (auto err = sched_->add(std::move(seq), s.params, s.num_choices))
    return {s.id, n, errc::prompt_too_long, *err};
  requests_.emplace(s.id, live_request{std::move(actor), s.num_choices, s.num_choices});
  const auto now = clock::now();
  for (int32_t c = 0; c < s.num_choices; ++c) // the prompt counted once
    metrics_.admitted(sequence_of(s.id, c), c == 0 ? n : 0, now);
  kick();
  return {s.id, n, {}, {}};
}

void scheduler_actor_state::stop(seq_id id, finish_reason why) { settle(sched_->abort(id, why)); }

void scheduler_actor_state::end_request(request_id id) {
  auto i = requests_.find(id);
  if (i == requests_.end())
    return;
  const int32_t n = i->second.num_choices;
  for (int32_t c = 0; c < n; ++c)
    dispatch(sched_->abort(sequence_of(id, c)));
}

void scheduler_actor_state::cancel(request_id id) {
  end_request(id);
  settle({});
}

void scheduler_actor_state::preempt(request_id id, bool by_swap) {
  sched_->force_preemption(id == 0 ? std::nullopt : std::optional<seq_id>(sequence_of(id, 0)),
                           by_swap ? preemption_mode::swap : preemption_mode::recompute);
  kick();
}

scheduler_figures scheduler_actor_state::figures() const {
  scheduler_figures out;
  runtime_figures& f = out.figures;
  f.running = sched_->num_running();
  f.waiting = sched_->num_waiting();
  f.swapped = sched_->num_swapped();
  f.preemptions = sched_->num_preemptions();
  f.preemptions_by_swap = sched_->num_preemptions_by_swap();
  f.swap_outs_refused = sched_->num_swap_outs_refused();
  f.peak_running = timing_.peak_running;
  f.planning_seconds = timing_.planning_seconds;
  f.forward_seconds = timing_.forward_seconds;
  f.sampling_seconds = timing_.sampling_seconds;
  metrics_.fill(f);
  out.num_reserved_blocks = sched_->num_reserved_blocks();
  out.idle = !sched_->has_work();
  out.num_admitted = metrics_.num_admitted();
  return out;
}

caf::typed_response_promise<bool> scheduler_actor_state::shutdown() {
  auto rp = self_->make_response_promise<bool>();
  shutdown_ = rp;
  std::vector<request_id> live;
  for (const auto& [id, r] : requests_)
    live.push_back(id);
  for (request_id id : live)
    end_request(id);
  maybe_finish_shutdown();
  return rp;
}

void scheduler_actor_state::swap_out_denied(seq_id id) {
  swap_report(&scheduler::swap_out_denied, id);
}

void scheduler_actor_state::swapped_out(seq_id id) {
  swap_report(&scheduler::complete_swap_out, id);
}

void scheduler_actor_state::swapped_in(seq_id id) { swap_report(&scheduler::complete_swap_in, id); }

// NOTE: settle kicks, as for every completion: the work that held the
// blocks may have completed before the refusal came, and then nothing else
// would ask for the swap-in again.
void scheduler_actor_state::swap_in_denied(seq_id id) {
  swap_report(&scheduler::swap_in_denied, id);
}

// NOTE: a swap's report can come after a device fault ended every sequence
// (fail_all): a refusal does not wait for the device, and a copy may have
// completed just before it failed. Such a report is for none of them.
void scheduler_actor_state::swap_report(
  std::vector<sequence_update> (scheduler::*report)(seq_id), seq_id id) {
  if (!device_fault_)
    settle(((*sched_).*report)(id));
}

void scheduler_actor_state::settle(const std::vector<sequence_update>& updates) {
  dispatch(updates);
  kick();
  maybe_finish_shutdown();
}

namespace {

using scheduler_self = scheduler_actor::stateful_pointer<scheduler_actor_state>;

scheduler_actor::behavior_type scheduler_fn(scheduler_self self, scheduler_parts parts) {
  auto& st = self->state;
  st.init(self, std::move(parts));
  return {
    [&st](submit_atom, submission& s, request_actor& actor) {
      return st.submit(std::move(s), std::move(actor));
    },
    [&st](stop_atom, seq_id id, finish_reason why) { st.stop(id, why); },
    [&st](cancel_atom, request_id id) { st.cancel(id); },
    [&st](preempt_atom, request_id id, bool by_swap) { st.preempt(id, by_swap); },
    [&st](figures_atom) { return st.figures(); },
    [&st](shutdown_atom) { return st.shutdown(); },
    [&st](swap_out_denied_atom, seq_id id) { st.swap_out_denied(id); },
    [&st](swapped_out_atom, seq_id id) { st.swapped_out(id); },
    [&st](swapped_in_atom, seq_id id) { st.swapped_in(id); },
    [&st](swap_in_denied_atom, seq_id id) { st.swap_in_denied(id); },
    [&st](window_atom) { st.window_passed(); },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_parts parts) {
  return sys.spawn(scheduler_fn, std::move(parts));
}

} // namespace kvactor
