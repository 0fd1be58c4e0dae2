// executor_actor: hands steps and swaps to the step_runner's device streams
// and answers each request when the device reports it done. Device callbacks
// only post a message back here (late by a jitter delay, in stress runs);
// nothing blocks a CAF thread. When the device fails, every step and swap in
// flight and every later one is answered with device_unusable and the fault.

#include "actors/runtime/spawn.hpp"

#include <optional>
#include <string>
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
  std::optional<caf::error> fault; // the device failed
};

executor_actor::behavior_type executor_fn(executor_actor::stateful_pointer<executor_state> self,
                                          std::shared_ptr<step_runner> runner,
                                          jitter_options delays) {
  self->state.runner = std::move(runner);
  self->state.delays = jitter(delays);
  // NOTE: weak: the runner, which the state holds, must not keep this actor.
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  self->state.runner->set_fault_handler([weak](const std::string& what) {
    if (auto me = caf::actor_cast<executor_actor>(weak.lock()))
      caf::anon_send(me, fault_atom::value, what);
  });
  return {
    [=](step_plan& plan) -> caf::typed_response_promise<step_output> {
      auto rp = self->make_response_promise<step_output>();
      if (self->state.fault) {
        rp.deliver(*self->state.fault);
        return rp;
      }
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
      if (self->state.fault) {
        rp.deliver(*self->state.fault);
        return rp;
      }
      const uint64_t ticket = self->state.next_ticket++;
      self->state.swaps.emplace(ticket, rp);
      executor_actor me = self;
      const auto delay = self->state.delays.next();
      self->state.runner->swap(order.direction, std::move(order.copies), [me, ticket, delay] {
        send_after(delay, me, done_atom::value, ticket);
      });
      return rp;
    },
    // NOTE: a completion already on its way when the device failed finds
    // its ticket answered.
    [=](done_atom, uint64_t ticket, step_output& out) {
      auto i = self->state.steps.find(ticket);
      if (i == self->state.steps.end())
        return;
      i->second.deliver(std::move(out));
      self->state.steps.erase(i);
    },
    [=](done_atom, uint64_t ticket) {
      auto i = self->state.swaps.find(ticket);
      if (i == self->state.swaps.end())
        return;
      i->second.deliver(true);
      self->state.swaps.erase(i);
    },
    [=](fault_atom, const std::string& what) {
      auto& st = self->state;
      if (st.fault)
        return; // a step that failed to enqueue and the device's watchdog, say
      st.fault = make_error(errc::device_unusable, what);
      for (auto& [ticket, rp] : st.steps)
        rp.deliver(*st.fault);
      for (auto& [ticket, rp] : st.swaps)
        rp.deliver(*st.fault);
      st.steps.clear();
      st.swaps.clear();
    },
  };
}

} // namespace

executor_actor spawn_executor(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                              jitter_options delays) {
  return sys.spawn(executor_fn, std::move(runner), delays);
}

} // namespace kvactor
