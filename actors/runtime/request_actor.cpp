// request_actor: one per request, over request_state. It validates and
// submits the request, streams each choice's token events to the sink, asks
// the scheduler to stop a choice at a stop sequence, and sends each choice's
// done event. If the sink goes down, it cancels every choice.

#include "actors/runtime/spawn.hpp"

namespace kvactor {

namespace {

struct request_actor_state {
  request_actor_state() = default;
  std::optional<request_state> req;
  bool submitted = false;
  std::vector<bool> stop_sent; // per choice: asked the scheduler to end it
  int32_t num_done = 0;
};

using request_self = request_actor::stateful_pointer<request_actor_state>;

// Asks the scheduler to end a choice, once.
void stop(request_self self, const scheduler_actor& sched, request_id id, int32_t choice,
          finish_reason why) {
  auto& sent = self->state.stop_sent;
  if (sent[size_t(choice)])
    return;
  sent[size_t(choice)] = true;
  self->send(sched, stop_atom::value, sequence_of(id, choice), why);
}

request_actor::behavior_type request_fn(request_self self, request_id id, generate_request req,
                                        sink_actor sink, scheduler_actor sched,
                                        request_context context) {
  self->monitor(sink);
  self->set_down_handler([=](const caf::down_msg&) {
    if (self->state.submitted)
      for (int32_t c = 0; c < self->state.req->num_choices(); ++c)
        stop(self, sched, id, c, finish_reason::aborted);
  });
  return {
    [=](admit_atom) -> caf::typed_response_promise<admission> {
      auto rp = self->make_response_promise<admission>();
      auto made = request_state::make(id, req, *context.tokenizer, context.limits,
                                      request_state::clock::now(), context.constraints.get(),
                                      context.no_constraints);
      if (auto* refused = std::get_if<admission>(&made)) {
        rp.deliver(std::move(*refused));
        self->quit();
        return rp;
      }
      auto& r = self->state.req.emplace(std::move(std::get<request_state>(made)));
      self->state.stop_sent.assign(size_t(r.num_choices()), false);
      submission s{id, r.prompt(), r.priority(), r.params(), r.num_choices()};
      self->request(sched, caf::infinite, submit_atom::value, std::move(s), request_actor{self})
        .then(
          [=](admission a) mutable {
            self->state.submitted = a.ok();
            const auto& accepted = *self->state.req;
            if (a.ok() && accepted.returns_prompt_tokens())
              a.prompt_tokens.assign(accepted.prompt().begin(), accepted.prompt().end());
            rp.deliver(a);
            if (!a.ok())
              self->quit();
          },
          [=](const caf::error&) mutable {
            // NOTE: the scheduler quit (a shutdown that ended before this
            // request was submitted).
            rp.deliver(admission{id, static_cast<int32_t>(self->state.req->prompt().size()),
                                 errc::overloaded, "the runtime is shutting down"});
            self->quit();
          });
      return rp;
    },
    [=](const sequence_update& u) {
      auto& r = *self->state.req;
      const int32_t choice = choice_of(u.id);
      const auto now = request_state::clock::now();
      if (u.token != no_token) {
        if (auto ev =
              r.on_token(choice, u.token, now, u.logprobs, u.finished == finish_reason::eos))
          self->send(sink, std::move(*ev));
        if (r.stop_seen(choice))
          stop(self, sched, id, choice, finish_reason::stop);
      }
      if (u.finished != finish_reason::none) {
        self->send(sink, r.finish(choice, u, now));
        if (++self->state.num_done == r.num_choices())
          self->quit();
      }
    },
  };
}

} // namespace

request_actor spawn_request(caf::actor_system& sys, request_id id, generate_request req,
                            sink_actor sink, scheduler_actor scheduler,
                            const request_context& context) {
  return sys.spawn(request_fn, id, std::move(req), std::move(sink), std::move(scheduler), context);
}

} // namespace kvactor
