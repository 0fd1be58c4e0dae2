#include "cluster/relay_actor.hpp"

#include <algorithm>
#include <variant>
#include <vector>

namespace kvactor::cluster {

namespace {

struct relay_state {
  relay_state() = default;
  bool admitted = false;
  std::vector<std::variant<token_event, done_event>> held; // until admitted
  std::vector<bool> ended;                                 // per choice
  bool passed_any = false;                                 // an event reached the client
};

using relay_self = relay_actor::stateful_pointer<relay_state>;

void pass(relay_self self, request_id id, const sink_actor& client, const relay_owner& front,
          std::variant<token_event, done_event> ev) {
  self->state.passed_any = true;
  if (auto* t = std::get_if<token_event>(&ev)) {
    t->id = id;
    self->send(client, std::move(*t));
    return;
  }
  auto& d = std::get<done_event>(ev);
  auto& ended = self->state.ended;
  if (d.choice < 0 || size_t(d.choice) >= ended.size() || ended[size_t(d.choice)])
    return;
  ended[size_t(d.choice)] = true;
  d.id = id;
  self->send(client, std::move(d));
  if (std::ranges::find(ended, false) != ended.end())
    return;
  self->send(front, ended_atom::value, id);
  self->quit();
}

// Ends every choice that had not ended with this event, and exits.
void end(relay_self self, request_id id, const sink_actor& client, done_event d) {
  d.id = id;
  const auto& ended = self->state.ended;
  for (size_t c = 0; c < ended.size(); ++c)
    if (!ended[c]) {
      d.choice = static_cast<int32_t>(c);
      self->send(client, d);
    }
  self->quit();
}

relay_actor::behavior_type relay_fn(relay_self self, request_id id, sink_actor client,
                                    relay_owner front, int32_t num_choices) {
  self->state.ended.assign(size_t(std::max(num_choices, 1)), false);
  self->monitor(client);
  self->set_down_handler([=](const caf::down_msg& dm) {
    if (dm.source == client.address())
      self->send(front, gone_atom::value, id);
  });
  auto take = [=](std::variant<token_event, done_event> ev) {
    if (self->state.admitted)
      pass(self, id, client, front, std::move(ev));
    else
      self->state.held.push_back(std::move(ev));
  };
  return {
    [=](token_event& ev) { take(std::move(ev)); },
    [=](done_event& d) { take(std::move(d)); },
    [=](admitted_atom) {
      auto& st = self->state;
      st.admitted = true;
      auto held = std::move(st.held);
      for (auto& ev : held)
        pass(self, id, client, front, std::move(ev));
    },
    [=](end_atom, done_event& d) { end(self, id, client, std::move(d)); },
    [=](lost_atom, done_event& d) {
      if (self->state.passed_any) {
        end(self, id, client, std::move(d));
        return false;
      }
      self->quit();
      return true;
    },
  };
}

} // namespace

relay_actor spawn_relay(caf::actor_system& sys, request_id id, sink_actor client,
                        relay_owner front, int32_t num_choices) {
  return sys.spawn(relay_fn, id, std::move(client), std::move(front), num_choices);
}

} // namespace kvactor::cluster
