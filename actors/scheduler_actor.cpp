// scheduler_actor: the runtime's front door and its step loop, over the
// scheduler state class. Planning a step is atomic (the reservation round
// trips to the block manager are awaited); running it is not: submits,
// cancels and swap reports are handled while the executor computes.

#include "actors/actors.hpp"
#include "actors/serving_metrics.hpp"

#include <chrono>
#include <unordered_map>

namespace kvactor {

namespace {

using clock = std::chrono::steady_clock;

// NOTE: how long a static batch waits for arrivals before it opens short of
// full; a burst of requests sent at once reaches the scheduler over some
// milliseconds, each through its own request actor.
constexpr auto batch_window_length = std::chrono::milliseconds(50);

enum class batch_window : uint8_t { closed, waiting, passed };

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

// Where the steps' time goes (see runtime_figures).
struct step_timing {
  clock::time_point step_start;
  double planning_seconds = 0;
  double forward_seconds = 0;
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
};

using self_ptr = scheduler_actor::stateful_pointer<scheduler_actor_state>;

void run_commands(self_ptr self) {
  const auto& parts = *self->state.parts;
  const scheduler_commands commands = self->state.sched->take_commands();
  for (const block_command& c : commands.blocks)
    switch (c.kind) {
      case block_command::release: self->send(parts.blocks, release_atom::value, c.id, c.num_computed); break;
      case block_command::forget: self->send(parts.blocks, forget_atom::value, c.id, c.num_computed); break;
      case block_command::fork: self->send(parts.blocks, fork_atom::value, c.id, c.child); break;
    }
  for (const swap_command& c : commands.swaps)
    switch (c.kind) {
      case swap_command::swap_out: self->send(parts.swap, swap_out_atom::value, c.id); break;
      case swap_command::swap_in: self->send(parts.swap, swap_in_atom::value, c.id, c.num_blocks); break;
      case swap_command::drop_host: self->send(parts.swap, drop_host_atom::value, c.id); break;
    }
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

void kick(self_ptr self);

void on_output(self_ptr self, const step_output& out) {
  auto& st = self->state;
  dispatch(self, st.sched->update_from_output(out));
  st.metrics.stepped(seconds_since(st.timing.step_start));
  st.timing.forward_seconds += out.forward_seconds;
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
    .then([=](const step_output& out) { on_output(self, out); });
}

// Plans the next step unless one is being planned or run.
void kick(self_ptr self) {
  auto& st = self->state;
  if (st.planning || st.sched->step_in_flight())
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
      if (st.shutdown)
        return {s.id, n, "overloaded", "the runtime is shutting down"};
      if (st.sched->num_waiting() >= st.parts->max_waiting)
        return {s.id, n, "overloaded",
                "the waiting queue is full (" + std::to_string(st.parts->max_waiting) + ")"};
      if (s.num_choices > 1 && !st.sched->forks())
        return {s.id, n, "invalid_field",
                "n > 1 needs continuous batching and paged KV blocks"};
      const seq_id first = sequence_of(s.id, 0);
      sequence seq(first, std::move(s.prompt), st.parts->block_size, s.priority, first);
      if (auto err = st.sched->add(std::move(seq), s.params, s.num_choices))
        return {s.id, n, "prompt_too_long", *err};
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
    [=](swap_in_atom, seq_id id, std::vector<block_id>& table) {
      dispatch(self, self->state.sched->complete_swap_in(id, std::move(table)));
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
    [=](window_atom) {
      auto& st = self->state;
      if (st.window == batch_window::waiting) // else a full batch opened meanwhile
        st.window = batch_window::passed;
      kick(self);
    },
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
