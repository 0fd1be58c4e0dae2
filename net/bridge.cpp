#include "net/bridge.hpp"

#include <unordered_map>
#include <unordered_set>

namespace kvactor::net {

namespace {

// An accepted request as the client named it, and its choices' ends so far.
struct client_request {
  std::string id;
  int32_t num_choices = 1;
  int32_t num_done = 0;
};

struct bridge_state {
  bridge_state() = default;
  std::function<void(std::string)> emit;
  std::unordered_map<request_id, client_request> client_ids; // accepted, not done
  std::unordered_map<std::string, request_id> runtime_ids;
  std::unordered_set<std::string> pending;   // submitted, not yet admitted
  std::unordered_set<std::string> cancelled; // cancelled while pending
  int32_t max_live_choices = 0;
  int32_t num_live_choices = 0; // of pending and accepted requests, not yet done
  bool draining = false;

  void emit_if_drained() {
    if (draining && pending.empty() && client_ids.empty())
      emit({});
  }
};

bridge_actor::behavior_type bridge_fn(bridge_actor::stateful_pointer<bridge_state> self,
                                      runtime_actor runtime,
                                      std::function<void(std::string)> emit,
                                      int32_t max_live_choices) {
  self->state.emit = std::move(emit);
  self->state.max_live_choices = max_live_choices;
  return {
    [=](generate_op& op) {
      auto& st = self->state;
      if (st.pending.contains(op.id) || st.runtime_ids.contains(op.id)) {
        st.emit(format_error({"duplicate_id", op.id, "id '" + op.id + "' is already live"}));
        return;
      }
      const int32_t num_choices = op.request.n;
      // NOTE: one connection's flood would hold the runtime's mailbox and
      // waiting queue against every other client: it is refused here.
      if (st.max_live_choices > 0 && st.num_live_choices + num_choices > st.max_live_choices) {
        st.emit(format_error({"overloaded", op.id,
                              "this connection has " + std::to_string(st.num_live_choices) +
                                " live choices; at most " + std::to_string(st.max_live_choices) +
                                " per connection"}));
        return;
      }
      st.pending.insert(op.id);
      st.num_live_choices += num_choices;
      self->request(runtime, caf::infinite, generate_atom::value, std::move(op.request),
                    sink_actor{self})
        .then(
          [=, id = op.id](const admission& a) {
            auto& s = self->state;
            s.pending.erase(id);
            if (!a.ok()) {
              s.num_live_choices -= num_choices;
              s.cancelled.erase(id);
              s.emit(format_error({to_string(a.error_code), id, a.error_message}));
              s.emit_if_drained();
              return;
            }
            s.client_ids.emplace(a.id, client_request{id, num_choices});
            s.runtime_ids.emplace(id, a.id);
            s.emit(format_accepted(id, a.num_prompt_tokens, a.prompt_tokens));
            if (s.cancelled.erase(id) > 0)
              self->send(runtime, cancel_atom::value, a.id);
          },
          [=, id = op.id](const caf::error& e) {
            self->state.pending.erase(id);
            self->state.num_live_choices -= num_choices;
            self->state.emit(
              format_error({"overloaded", id, "the runtime did not answer: " + to_string(e)}));
            self->state.emit_if_drained();
          });
    },
    [=](const cancel_op& op) {
      auto& st = self->state;
      if (auto i = st.runtime_ids.find(op.id); i != st.runtime_ids.end())
        self->send(runtime, cancel_atom::value, i->second);
      else if (st.pending.contains(op.id))
        st.cancelled.insert(op.id);
      else
        st.emit(format_error({"unknown_id", op.id, "no live request with id '" + op.id + "'"}));
    },
    [=](const stats_op&) {
      self->request(runtime, caf::infinite, figures_atom::value)
        .then([=](const runtime_figures& f) { self->state.emit(format_stats(f)); });
    },
    [=](const token_event& ev) {
      auto& st = self->state;
      if (auto i = st.client_ids.find(ev.id); i != st.client_ids.end())
        st.emit(format_token(i->second.id, ev, i->second.num_choices));
    },
    [=](const done_event& d) {
      auto& st = self->state;
      auto i = st.client_ids.find(d.id);
      if (i == st.client_ids.end())
        return;
      client_request& r = i->second;
      st.emit(format_done(r.id, d, r.num_choices));
      --st.num_live_choices;
      if (++r.num_done < r.num_choices)
        return;
      st.runtime_ids.erase(r.id);
      st.client_ids.erase(i);
      st.emit_if_drained();
    },
    [=](drain_atom) {
      self->state.draining = true;
      self->state.emit_if_drained();
    },
  };
}

} // namespace

bridge_actor spawn_bridge(caf::actor_system& sys, runtime_actor runtime,
                          std::function<void(std::string)> emit, int32_t max_live_choices) {
  return sys.spawn(bridge_fn, std::move(runtime), std::move(emit), max_live_choices);
}

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<generate_op>("kvactor.net.generate_op");
  cfg.add_message_type<cancel_op>("kvactor.net.cancel_op");
  cfg.add_message_type<stats_op>("kvactor.net.stats_op");
}

} // namespace kvactor::net
