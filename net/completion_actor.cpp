#include "net/completion_actor.hpp"

#include <optional>

namespace kvactor::net {

namespace {

struct completion_actor_state {
  completion_actor_state() = default;
  std::function<void(reply_part)> emit;
  std::optional<completion> answer;
  size_t num_answered = 0;      // admissions received
  std::vector<request_id> live; // accepted
  std::optional<api_error> refused;
  bool started = false;         // the response's head went out
  std::string pending;          // stream text before the head
  bool stream = false;

  void send_part(std::string body, bool last) {
    reply_part p;
    p.chunked = true;
    p.body = std::move(body);
    p.last = last;
    if (!started) {
      p.status = 200;
      p.content_type = "text/event-stream";
      started = true;
    }
    emit(std::move(p));
  }
};

using completion_self = sink_actor::stateful_pointer<completion_actor_state>;

// Every admission is in: answer a refusal, or open the stream.
void on_admitted(completion_self self, runtime_actor runtime) {
  auto& st = self->state;
  if (st.refused) {
    for (request_id id : st.live)
      self->send(runtime, cancel_atom::value, id);
    st.emit(whole_reply(st.refused->status, "application/json", format_api_error(*st.refused)));
    self->quit();
    return;
  }
  if (st.stream)
    st.send_part(std::exchange(st.pending, {}), false);
}

// Sends what a stream has to send, and the answer once every choice is done.
void advance(completion_self self, std::string text) {
  // NOTE: a choice's events come after its admission (both from its request
  // actor), so the answer is done only after every admission is in.
  auto& st = self->state;
  if (!st.answer->done()) {
    if (text.empty())
      return;
    if (st.started)
      st.send_part(std::move(text), false);
    else
      st.pending += text; // an earlier choice streams while a later one awaits admission
    return;
  }
  if (st.stream) {
    st.pending += text;
    st.pending += st.answer->finish();
    st.send_part(std::exchange(st.pending, {}), true);
  } else {
    st.emit(whole_reply(200, "application/json", st.answer->finish()));
  }
  self->quit();
}

sink_actor::behavior_type completion_fn(completion_self self, runtime_actor runtime,
                                        completion_request request, completion_meta meta,
                                        std::function<void(reply_part)> emit) {
  auto& st = self->state;
  st.emit = std::move(emit);
  st.stream = meta.stream;
  const size_t n = request.prompts.size();
  // the same for every prompt
  st.answer.emplace(std::move(meta), n, size_t(request.prompts.front().n));
  for (size_t i = 0; i < n; ++i)
    self->request(runtime, caf::infinite, generate_atom::value, std::move(request.prompts[i]),
                  sink_actor{self})
      .then(
        [=](const admission& a) {
          auto& s = self->state;
          ++s.num_answered;
          if (a.ok()) {
            s.live.push_back(a.id);
            s.answer->accepted(i, a.id, a.prompt_tokens);
          } else if (!s.refused) {
            s.refused = admission_error(a, n > 1 ? std::optional<size_t>(i) : std::nullopt);
          }
          if (s.num_answered == n)
            on_admitted(self, runtime);
        },
        [=](const caf::error& e) {
          auto& s = self->state;
          ++s.num_answered;
          if (!s.refused)
            s.refused = api_error{503, "the runtime did not answer: " + to_string(e),
                                  "server_error"};
          if (s.num_answered == n)
            on_admitted(self, runtime);
        });
  return {
    [=](const token_event& ev) { advance(self, self->state.answer->on_token(ev)); },
    [=](const done_event& d) { advance(self, self->state.answer->on_done(d)); },
  };
}

} // namespace

sink_actor spawn_completion(caf::actor_system& sys, runtime_actor runtime,
                            completion_request request, completion_meta meta,
                            std::function<void(reply_part)> emit) {
  return sys.spawn(completion_fn, std::move(runtime), std::move(request), std::move(meta),
                   std::move(emit));
}

} // namespace kvactor::net
