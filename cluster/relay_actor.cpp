#include "cluster/relay_actor.hpp"

#include <variant>
#include <vector>

namespace kvactor::cluster {

namespace {

struct relay_state {
  relay_state() = default;
  bool admitted = false;
  std::vector<std::variant<token_event, done_event>> held; // until admitted
};

using relay_self = relay_actor::stateful_pointer<relay_state>;

void pass(relay_self self, request_id id, const sink_actor& client, const relay_owner& front,
          std::variant<token_event, done_event> ev) {
  if (auto* t = std::get_if<token_event>(&ev)) {
    t->id = id;
    self->send(client, std::move(*t));
    return;
  }
  auto& d = std::get<done_event>(ev);
  d.id = id;
  self->send(client, std::move(d));
  self->send(front, ended_atom::value, id);
  self->quit();
}

relay_actor::behavior_type relay_fn(relay_self self, request_id id, sink_actor client,
                                    relay_owner front) {
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
    [=](end_atom, done_event& d) {
      d.id = id;
      self->send(client, std::move(d));
      self->quit();
    },
  };
}

} // namespace

relay_actor spawn_relay(caf::actor_system& sys, request_id id, sink_actor client,
                        relay_owner front) {
  return sys.spawn(relay_fn, id, std::move(client), std::move(front));
}

} // namespace kvactor::cluster
