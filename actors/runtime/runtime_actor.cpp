// runtime_actor: the runtime's front door for the host (kvactor.hpp). A
// generate spawns the request's actor, which validates, tokenizes and
// submits to the scheduler itself; cancels and forced preemptions pass on
// to the scheduler; figures gather the scheduler's and the pools'; shutdown
// waits for the scheduler's.

#include "actors/runtime/spawn.hpp"

#include <memory>
#include <optional>

namespace kvactor {

namespace {

struct runtime_state {
  runtime_state() = default;
  std::optional<runtime_parts> parts;
  request_id next_id = 1;
  bool shutting_down = false;
};

using runtime_self = runtime_actor::stateful_pointer<runtime_state>;

// What an idle runtime must hold: no sequence in the block manager's ledger
// or in the host pool. Only when the scheduler was idle when the figures
// were asked for and admitted nothing until the pools answered: its ends'
// forget and drop_host commands went out before its answer, so before the
// pools were asked, and no sequence came after.
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

// The scheduler's figures with the pools' added.
runtime_figures merged(const scheduler_figures& sched, int32_t block_size, const pool_figures& pool,
                       const host_figures& host) {
  runtime_figures f = sched.figures;
  f.device_blocks_total = pool.num_blocks;
  f.device_blocks_free = pool.num_free_blocks;
  f.device_blocks_cached = pool.num_cached_blocks;
  f.device_blocks_used = pool.num_used_blocks;
  f.host_blocks_total = host.num_blocks;
  f.host_blocks_free = host.num_free_blocks;
  f.prefix_hit_rate = pool.prefix_hit_rate();
  f.prefix_queries = pool.num_prefix_queries;
  f.prefix_hits = pool.num_prefix_hits;
  f.kv_utilisation = pool.kv_utilisation();
  if (sched.num_reserved_blocks > 0)
    f.kv_utilisation = static_cast<double>(pool.num_used_slots) /
                       (static_cast<double>(sched.num_reserved_blocks) * block_size);
  return f;
}

// One figures question: the scheduler's, the block manager's, the swap
// actor's, then the scheduler's admissions again (see idle_leftovers).
struct figures_round {
  caf::typed_response_promise<runtime_figures> rp;
  scheduler_figures before;
  pool_figures pool;
  std::vector<std::string> broken;
  host_figures host;
};
using round_ptr = std::shared_ptr<figures_round>;

// An actor that is gone (a shutdown that ended meanwhile) answers the host
// with its error.
auto failed(round_ptr r) {
  return [r](caf::error& err) { r->rp.deliver(std::move(err)); };
}

void answer(runtime_self self, round_ptr r, const scheduler_figures& after) {
  auto f = merged(r->before, self->state.parts->block_size, r->pool, r->host);
  f.broken_invariants = std::move(r->broken);
  f.broken_invariants.insert(f.broken_invariants.end(), r->host.broken_invariants.begin(),
                             r->host.broken_invariants.end());
  if (r->before.idle && after.num_admitted == r->before.num_admitted)
    for (auto& b : idle_leftovers(r->pool, r->host))
      f.broken_invariants.push_back(std::move(b));
  r->rp.deliver(std::move(f));
}

// The round's steps, one request each, in order.
void ask_after(runtime_self self, round_ptr r) {
  self->request(self->state.parts->scheduler, caf::infinite, figures_atom::value)
    .then([=](const scheduler_figures& after) { answer(self, r, after); }, failed(r));
}

void ask_swap(runtime_self self, round_ptr r) {
  self->request(self->state.parts->swap, caf::infinite, figures_atom::value)
    .then(
      [=](const host_figures& host) {
        r->host = host;
        ask_after(self, r);
      },
      failed(r));
}

void ask_blocks(runtime_self self, round_ptr r) {
  self->request(self->state.parts->blocks, caf::infinite, figures_atom::value)
    .then(
      [=](const pool_figures& pool, const std::vector<std::string>& broken) {
        r->pool = pool;
        r->broken = broken;
        ask_swap(self, r);
      },
      failed(r));
}

void figures(runtime_self self, round_ptr r) {
  self->request(self->state.parts->scheduler, caf::infinite, figures_atom::value)
    .then(
      [=](const scheduler_figures& before) {
        r->before = before;
        ask_blocks(self, r);
      },
      failed(r));
}

runtime_actor::behavior_type runtime_fn(runtime_self self, runtime_parts parts) {
  // NOTE: a host may end the runtime with an exit message rather than a
  // shutdown; the link passes it on to the scheduler, whose end releases the
  // other actors (the swap actor and the scheduler hold each other's handle).
  self->link_to(parts.scheduler);
  self->state.parts.emplace(std::move(parts));
  return {
    [=](generate_atom, generate_request& req, sink_actor& sink) -> caf::result<admission> {
      auto& st = self->state;
      const request_id id = st.next_id++;
      if (st.shutting_down)
        return admission{id, 0, errc::overloaded, "the runtime is shutting down"};
      auto actor = spawn_request(self->system(), id, std::move(req), std::move(sink),
                                 st.parts->scheduler, st.parts->requests);
      return self->delegate(actor, admit_atom::value);
    },
    [=](cancel_atom, request_id id) {
      self->send(self->state.parts->scheduler, cancel_atom::value, id);
    },
    [=](preempt_atom, request_id id, bool by_swap) {
      self->send(self->state.parts->scheduler, preempt_atom::value, id, by_swap);
    },
    [=](figures_atom) {
      auto r = std::make_shared<figures_round>();
      r->rp = self->make_response_promise<runtime_figures>();
      figures(self, r);
      return r->rp;
    },
    [=](shutdown_atom) {
      self->state.shutting_down = true;
      auto rp = self->make_response_promise<bool>();
      self->request(self->state.parts->scheduler, caf::infinite, shutdown_atom::value)
        .then(
          [=](bool done) mutable {
            rp.deliver(done);
            self->quit();
          },
          [=](caf::error& err) mutable {
            rp.deliver(std::move(err));
            self->quit();
          });
      return rp;
    },
  };
}

} // namespace

runtime_actor spawn_runtime_actor(caf::actor_system& sys, runtime_parts parts) {
  return sys.spawn(runtime_fn, std::move(parts));
}

} // namespace kvactor
