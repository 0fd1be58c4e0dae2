// executor_actor: hands steps and swaps to the step_runner's device streams
// and answers each request when the device reports it done. Device callbacks
// only post a message back here (late by a jitter delay, in stress runs);
// nothing blocks a CAF thread.

#include "actors/actors.hpp"

#include <unordered_map>

namespace kvactor {

namespace {

struct executor_state {
  executor_state() = default;
  std::shared_ptr<step_runner> runner;
  jitter delays;
  uint64_t next_ticket = 1;
  std::unordered_map<uint64_t, caf::typed_response_promise<step_output>> steps;
  std::unordered_map<uint64_t, caf::typed_response_promise<bool>> swaps;
};

executor_actor::behavior_type executor_fn(executor_actor::stateful_pointer<executor_state> self,
                                          std::shared_ptr<step_runner> runner,
                                          jitter_options delays) {
  self->state.runner = std::move(runner);
  self->state.delays = jitter(delays);
  return {
    [=](step_plan& plan) -> caf::typed_response_promise<step_output> {
      auto rp = self->make_response_promise<step_output>();
      const uint64_t ticket = self->state.next_ticket++;
      self->state.steps.emplace(ticket, rp);
      executor_actor me = self;
      const auto delay = self->state.delays.next();
      self->state.runner->run(std::move(plan), [me, ticket, delay](step_output out) {
        send_after(delay, me, done_atom::value, ticket, std::move(out));
      });
      return rp;
    },
    [=](swap_order& order) -> caf::typed_response_promise<bool> {
      auto rp = self->make_response_promise<bool>();
      const uint64_t ticket = self->state.next_ticket++;
      self->state.swaps.emplace(ticket, rp);
      executor_actor me = self;
      const auto delay = self->state.delays.next();
      self->state.runner->swap(order.direction, std::move(order.copies), [me, ticket, delay] {
        send_after(delay, me, done_atom::value, ticket);
      });
      return rp;
    },
    [=](done_atom, uint64_t ticket, step_output& out) {
      auto i = self->state.steps.find(ticket);
      i->second.deliver(std::move(out));
      self->state.steps.erase(i);
    },
    [=](done_atom, uint64_t ticket) {
      auto i = self->state.swaps.find(ticket);
      i->second.deliver(true);
      self->state.swaps.erase(i);
    },
  };
}

} // namespace

executor_actor spawn_executor(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                              jitter_options delays) {
  return sys.spawn(executor_fn, std::move(runner), delays);
}

} // namespace kvactor
