// request_actor: one per request, over request_state. It validates and
// submits the request, streams token events to the sink, asks the scheduler
// to stop at a stop sequence, and sends the one done event. If the sink goes
// down, it cancels its sequence.

#include "actors/actors.hpp"

namespace kvactor {

namespace {

struct request_actor_state {
  request_actor_state() = default;
  std::optional<request_state> req;
  bool submitted = false;
  bool stop_sent = false;
};

request_actor::behavior_type request_fn(request_actor::stateful_pointer<request_actor_state> self,
                                        request_id id, generate_request req, sink_actor sink,
                                        scheduler_actor sched, request_context context) {
  self->monitor(sink);
  self->set_down_handler([=](const caf::down_msg&) {
    if (self->state.submitted && !self->state.stop_sent) {
      self->state.stop_sent = true;
      self->send(sched, stop_atom::value, id, finish_reason::aborted);
    }
  });
  return {
    [=](start_atom) -> caf::typed_response_promise<admission> {
      auto rp = self->make_response_promise<admission>();
      auto made = request_state::make(id, req, *context.tokenizer, context.limits,
                                      request_state::clock::now());
      if (auto* refused = std::get_if<admission>(&made)) {
        rp.deliver(std::move(*refused));
        self->quit();
        return rp;
      }
      auto& r = self->state.req.emplace(std::move(std::get<request_state>(made)));
      submission s{id, r.prompt(), r.priority(), r.params()};
      self->request(sched, caf::infinite, submit_atom::value, std::move(s), request_actor{self})
        .then([=](admission a) mutable {
          self->state.submitted = a.ok();
          rp.deliver(a);
          if (!a.ok())
            self->quit();
        });
      return rp;
    },
    [=](const sequence_update& u) {
      auto& r = *self->state.req;
      const auto now = request_state::clock::now();
      if (u.token != no_token) {
        if (auto ev = r.on_token(u.token, now, u.logprobs))
          self->send(sink, std::move(*ev));
        if (r.stop_seen() && !self->state.stop_sent) {
          self->state.stop_sent = true;
          self->send(sched, stop_atom::value, id, finish_reason::stop);
        }
      }
      if (u.finished != finish_reason::none) {
        self->send(sink, r.finish(u, now));
        self->quit();
      }
    },
  };
}

} // namespace

request_actor spawn_request(caf::actor_system& sys, request_id id, generate_request req,
                            sink_actor sink, scheduler_actor scheduler,
                            const request_context& context) {
  return sys.spawn(request_fn, id, std::move(req), std::move(sink), std::move(scheduler),
                   context);
}

} // namespace kvactor
