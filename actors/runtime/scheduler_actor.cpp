// scheduler_actor: the runtime's front door over the step loop
// (step_loop.hpp) — admission, cancels and stops, the swap actor's reports,
// figures, forced preemptions and shutdown.

#include "actors/runtime/step_loop.hpp"

namespace kvactor {

namespace {

using namespace step_loop;

void end(self_ptr self, seq_id id, finish_reason why) {
  dispatch(self, self->state.sched->abort(id, why));
  kick(self);
  maybe_finish_shutdown(self);
}

// Ends every choice of a request (the ones still to fork end with the first).
void cancel(self_ptr self, request_id id) {
  auto i = self->state.requests.find(id);
  if (i == self->state.requests.end())
    return;
  const int32_t n = i->second.num_choices;
  for (int32_t c = 0; c < n; ++c)
    dispatch(self, self->state.sched->abort(sequence_of(id, c)));
}

// What an idle runtime must hold: no sequence in the block manager's ledger
// or in the host pool. Only when the scheduler was idle when the figures
// were asked for and admitted nothing since: its ends' forget and drop_host
// commands went out before the question, and no sequence came after.
std::vector<std::string> idle_leftovers(const pool_figures& pool, const host_figures& host) {
  std::vector<std::string> broken;
  if (pool.num_sequences > 0)
    broken.push_back("idle runtime: the block manager still tracks " +
                     std::to_string(pool.num_sequences) + " sequences");
  if (host.num_sequences > 0)
    broken.push_back("idle runtime: the host pool still holds blocks of " +
                     std::to_string(host.num_sequences) + " sequences");
  return broken;
}

void figures(self_ptr self, caf::typed_response_promise<runtime_figures> rp) {
  const auto& parts = *self->state.parts;
  const bool idle = !self->state.sched->has_work();
  const int64_t submitted = self->state.metrics.num_admitted();
  self->request(parts.blocks, caf::infinite, figures_atom::value)
    .then([=](const pool_figures& pool, const std::vector<std::string>& broken) mutable {
      self->request(self->state.parts->swap, caf::infinite, figures_atom::value)
        .then([=](const host_figures& host) mutable {
          const auto& st = self->state;
          runtime_figures f;
          f.device_blocks_total = pool.num_blocks;
          f.device_blocks_free = pool.num_free_blocks;
          f.device_blocks_cached = pool.num_cached_blocks;
          f.device_blocks_used = pool.num_used_blocks;
          f.host_blocks_total = host.num_blocks;
          f.host_blocks_free = host.num_free_blocks;
          f.running = st.sched->num_running();
          f.waiting = st.sched->num_waiting();
          f.swapped = st.sched->num_swapped();
          f.prefix_hit_rate = pool.prefix_hit_rate();
          f.kv_utilisation = pool.kv_utilisation();
          if (const int32_t reserved = st.sched->num_reserved_blocks(); reserved > 0)
            f.kv_utilisation = static_cast<double>(pool.num_used_slots) /
                               (static_cast<double>(reserved) * st.parts->block_size);
          f.preemptions = st.sched->num_preemptions();
          f.peak_running = st.timing.peak_running;
          f.planning_seconds = st.timing.planning_seconds;
          f.forward_seconds = st.timing.forward_seconds;
          f.sampling_seconds = st.timing.sampling_seconds;
          f.prefix_queries = pool.num_prefix_queries;
          f.prefix_hits = pool.num_prefix_hits;
          st.metrics.fill(f);
          f.broken_invariants = broken;
          f.broken_invariants.insert(f.broken_invariants.end(), host.broken_invariants.begin(),
                                     host.broken_invariants.end());
          if (idle && st.metrics.num_admitted() == submitted)
            for (auto& b : idle_leftovers(pool, host))
              f.broken_invariants.push_back(std::move(b));
          rp.deliver(std::move(f));
        });
    });
}

scheduler_actor::behavior_type scheduler_fn(self_ptr self, scheduler_parts parts) {
  self->state.sched.emplace(parts.config, parts.num_device_blocks, parts.num_host_blocks,
                            parts.block_size);
  self->send(parts.swap, start_atom::value, scheduler_actor{self});
  self->state.parts.emplace(std::move(parts));
  return {
    // NOTE: admission goes scheduler -> request actor -> scheduler: the
    // request actor validates and tokenizes the prompt (a long prompt takes
    // milliseconds) on its own thread, so the step loop never waits for it;
    // only the submit, with the tokens, comes back here.
    [=](generate_atom, generate_request& req,
        sink_actor& sink) -> caf::delegated<admission> {
      auto& st = self->state;
      const request_id id = st.next_id++;
      auto ra = spawn_request(self->system(), id, std::move(req), std::move(sink),
                              scheduler_actor{self}, st.parts->requests);
      return self->delegate(ra, start_atom::value);
    },
    [=](submit_atom, submission& s, request_actor& ra) -> admission {
      auto& st = self->state;
      const auto n = static_cast<int32_t>(s.prompt.size());
      if (st.device_fault)
        return {s.id, n, errc::device_unusable, "the device failed: " + *st.device_fault};
      if (st.shutdown)
        return {s.id, n, errc::overloaded, "the runtime is shutting down"};
      if (st.sched->num_waiting() >= st.parts->max_waiting)
        return {s.id, n, errc::overloaded,
                "the waiting queue is full (" + std::to_string(st.parts->max_waiting) + ")"};
      if (s.num_choices > 1 && !st.sched->forks())
        return {s.id, n, errc::invalid_field,
                "n > 1 needs continuous batching and paged KV blocks"};
      const seq_id first = sequence_of(s.id, 0);
      sequence seq(first, std::move(s.prompt), s.priority, first);
      if (auto err = st.sched->add(std::move(seq), s.params, s.num_choices))
        return {s.id, n, errc::prompt_too_long, *err};
      st.requests.emplace(s.id, live_request{std::move(ra), s.num_choices, s.num_choices});
      const auto now = clock::now();
      for (int32_t c = 0; c < s.num_choices; ++c) // the prompt counted once
        st.metrics.admitted(sequence_of(s.id, c), c == 0 ? n : 0, now);
      kick(self);
      return {s.id, n, {}, {}};
    },
    [=](cancel_atom, request_id id) {
      cancel(self, id);
      kick(self);
      maybe_finish_shutdown(self);
    },
    [=](stop_atom, seq_id id, finish_reason why) { end(self, id, why); },
    [=](figures_atom) -> caf::typed_response_promise<runtime_figures> {
      auto rp = self->make_response_promise<runtime_figures>();
      figures(self, rp);
      return rp;
    },
    [=](preempt_atom, request_id id, bool by_swap) {
      self->state.sched->force_preemption(id == 0 ? std::nullopt
                                                  : std::optional<seq_id>(sequence_of(id, 0)),
                                          by_swap ? preemption_mode::swap
                                                  : preemption_mode::recompute);
      kick(self);
    },
    [=](shutdown_atom) -> caf::typed_response_promise<bool> {
      auto& st = self->state;
      auto rp = self->make_response_promise<bool>();
      st.shutdown = rp;
      std::vector<request_id> live;
      for (const auto& [id, r] : st.requests)
        live.push_back(id);
      for (request_id id : live)
        cancel(self, id);
      maybe_finish_shutdown(self);
      return rp;
    },
    [=](swapped_atom, seq_id id) {
      dispatch(self, self->state.sched->complete_swap_out(id));
      kick(self);
      maybe_finish_shutdown(self);
    },
    [=](swap_in_atom, seq_id id) {
      dispatch(self, self->state.sched->complete_swap_in(id));
      kick(self);
      maybe_finish_shutdown(self);
    },
    // NOTE: a kick, as for every completion: the work that held the blocks
    // may have completed before the refusal came, and then nothing else
    // would ask for the swap-in again.
    [=](denied_atom, seq_id id) {
      dispatch(self, self->state.sched->swap_in_denied(id));
      kick(self);
      maybe_finish_shutdown(self);
    },
    [=](window_atom) { window_passed(self); },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_parts parts) {
  return sys.spawn(scheduler_fn, std::move(parts));
}

runtime_actor spawn_runtime(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                            request_context requests, scheduler_config config,
                            int32_t max_waiting, jitter_options delays) {
  scheduler_parts parts;
  parts.config = std::move(config);
  parts.num_device_blocks = runner->num_device_blocks();
  parts.num_host_blocks = runner->num_host_blocks();
  parts.block_size = runner->block_size();
  parts.max_waiting = max_waiting;
  parts.requests = std::move(requests);
  parts.executor = spawn_executor(sys, runner, delays);
  parts.blocks = spawn_block_manager(sys, parts.num_device_blocks, parts.block_size,
                                     parts.config.prefix_caching);
  // NOTE: a stream of its own, so the swap actor's draws do not shift the executor's.
  delays.seed = ~delays.seed;
  parts.swap = spawn_swap(sys, parts.num_host_blocks, parts.blocks, parts.executor, delays);
  return spawn_scheduler(sys, std::move(parts));
}

} // namespace kvactor
