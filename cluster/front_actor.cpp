// front_actor: the runtime interface over the workers. generate routes and
// relays, cancel follows the request to its worker, figures sums the
// workers', shutdown ends the front's requests (never the workers).

#include "actors/core/block_hash.hpp"
#include "cluster/figures_sum.hpp"
#include "cluster/front_state.hpp"

namespace kvactor::cluster {

namespace {

using namespace std::chrono_literals;

// The prefix key of a request: the hash of its first full KV block (none
// while no worker has told the block size, or for a shorter prompt).
std::optional<uint64_t> first_block_key(const front_state& st, const generate_request& req,
                                        int32_t& num_prompt_tokens) {
  std::vector<int32_t> encoded;
  const std::vector<int32_t>* tokens = &req.prompt_tokens;
  if (req.prompt_tokens.empty() && st.options.tokenizer) {
    encoded = st.options.tokenizer->encode(req.prompt, req.add_special_tokens);
    tokens = &encoded;
  }
  num_prompt_tokens = static_cast<int32_t>(tokens->size());
  if (st.block_size <= 0 || num_prompt_tokens < st.block_size)
    return std::nullopt;
  return hash_block(root_block_hash, std::span<const token_id>(tokens->data(), st.block_size));
}

// The blocks a request will need: its prompt's, shared by its choices, and
// each choice's output.
int32_t num_blocks_of(const generate_request& req, int32_t num_prompt_tokens, int32_t bs) {
  return (num_prompt_tokens + bs - 1) / bs +
         std::max(req.n, 1) * ((std::max(req.max_tokens, 0) + bs - 1) / bs);
}

std::optional<router::choice> pick_worker(front_state& st, const generate_request& req) {
  int32_t num_prompt_tokens = 0;
  auto key = first_block_key(st, req, num_prompt_tokens);
  return st.routes->route(key, num_blocks_of(req, num_prompt_tokens, std::max(st.block_size, 1)));
}

// The worker's answer to a request sent to it through `relay`.
void on_admission(front_self self, request_id id, size_t w, const relay_actor& relay,
                  const admission& a) {
  auto& st = self->state;
  auto i = st.requests.find(id);
  if (i == st.requests.end() || i->second.relay != relay)
    return; // the worker was lost meanwhile: the request ended or moved on
  auto& r = i->second;
  if (!a.ok()) {
    if (r.promise) {
      r.promise->deliver(a);
      caf::anon_send_exit(relay, caf::exit_reason::user_shutdown);
    } else { // moved here from a lost worker: the client holds its admission
      done_event refused;
      refused.finish_reason = finish_reason::error;
      refused.error_code = a.error_code;
      refused.error_message = a.error_message;
      self->send(relay, end_atom::value, refused);
    }
    st.routes->ended(w);
    st.requests.erase(i);
    return;
  }
  r.admitted = true;
  r.worker_id = a.id;
  if (r.promise) {
    r.promise->deliver(admission{id, a.num_prompt_tokens, errc::none, {}, a.prompt_tokens});
    r.promise.reset();
  }
  self->send(relay, admitted_atom::value);
  if (r.cancelled)
    self->send(st.links[w].handle, cancel_atom::value, a.id);
}

caf::typed_response_promise<admission> route(front_self self, generate_request& req,
                                             sink_actor& client) {
  auto& st = self->state;
  auto rp = self->make_response_promise<admission>();
  if (st.stopping) {
    rp.deliver(admission{0, 0, errc::overloaded, "the front is shutting down"});
    return rp;
  }
  auto choice = pick_worker(st, req);
  if (!choice) {
    rp.deliver(admission{0, 0, errc::overloaded, "no live worker behind this front"});
    return rp;
  }
  const request_id id = st.next_id++;
  routed_request r;
  r.client = std::move(client);
  r.promise = rp;
  st.requests.emplace(id, std::move(r));
  send_to_worker(self, id, choice->worker, std::move(req));
  return rp;
}

// The client cancelled, or its sink went down.
void cancel(front_self self, request_id id) {
  auto& st = self->state;
  auto i = st.requests.find(id);
  if (i == st.requests.end())
    return;
  auto& r = i->second;
  if (r.admitted)
    self->send(st.links[r.worker].handle, cancel_atom::value, r.worker_id);
  else
    r.cancelled = true;
}

struct figures_collector {
  caf::typed_response_promise<runtime_figures> rp;
  std::vector<addressed_figures> parts;
  size_t num_waiting = 0;
};

caf::typed_response_promise<runtime_figures> figures(front_self self) {
  auto& st = self->state;
  auto c = std::make_shared<figures_collector>();
  c->rp = self->make_response_promise<runtime_figures>();
  for (const auto& link : st.links)
    c->num_waiting += link.state == link_state::live ? 1 : 0;
  if (c->num_waiting == 0) {
    c->rp.deliver(front_figures(self, {}));
    return c->rp;
  }
  auto one_done = [=] {
    if (--c->num_waiting == 0)
      c->rp.deliver(front_figures(self, c->parts));
  };
  for (size_t w = 0; w < st.links.size(); ++w) {
    const auto& link = st.links[w];
    if (link.state != link_state::live)
      continue;
    auto handle = link.handle;
    self->request(handle, 2s, figures_atom::value)
      .then(
        [=](const runtime_figures& f) {
          auto& l = self->state.links[w];
          if (l.handle == handle) {
            l.last = f;
            self->state.routes->report(w, load_of(f));
          }
          c->parts.push_back({l.address.str(), f});
          one_done();
        },
        [=](const caf::error&) { one_done(); });
  }
  return c->rp;
}

front_actor::behavior_type front_fn(front_self self, front_options options) {
  auto& st = self->state;
  st.routes.emplace(options.workers.size(), options.routing);
  for (const auto& ep : options.workers)
    st.links.push_back(worker_link{ep, link_state::connecting, {}, {}, false, {}, {}});
  st.options = std::move(options);
  self->set_down_handler([=](const caf::down_msg& dm) { on_down(self, dm); });
  self->send(self, tick_atom::value);
  return {
    [=](generate_atom, generate_request& req, sink_actor& client) {
      return route(self, req, client);
    },
    [=](cancel_atom, request_id id) { cancel(self, id); },
    [=](gone_atom, request_id id) { cancel(self, id); },
    [=](ended_atom, request_id id) {
      auto& s = self->state;
      if (auto i = s.requests.find(id); i != s.requests.end()) {
        s.routes->ended(i->second.worker);
        s.requests.erase(i);
      }
    },
    [=](figures_atom) { return figures(self); },
    [=](preempt_atom, request_id id, bool swap) {
      auto& s = self->state;
      if (id == 0) {
        for (const auto& link : s.links)
          if (link.state == link_state::live)
            self->send(link.handle, preempt_atom::value, request_id{0}, swap);
      } else if (auto i = s.requests.find(id); i != s.requests.end() && i->second.admitted) {
        self->send(s.links[i->second.worker].handle, preempt_atom::value, i->second.worker_id,
                   swap);
      }
    },
    [=](tick_atom) {
      if (self->state.stopping)
        return;
      on_tick(self);
      self->delayed_send(self, self->state.options.report_interval, tick_atom::value);
    },
    [=](shutdown_atom) {
      auto& s = self->state;
      s.stopping = true;
      done_event aborted;
      aborted.finish_reason = finish_reason::aborted;
      admission refused{0, 0, errc::overloaded, "the front is shutting down"};
      end_requests(self, std::nullopt, aborted, refused);
      self->quit();
      return true;
    },
  };
}

} // namespace

void send_to_worker(front_self self, request_id id, size_t w, generate_request req) {
  auto& st = self->state;
  auto& r = st.requests.at(id);
  r.worker = w;
  r.admitted = false;
  r.relay = spawn_relay(self->system(), id, r.client, relay_owner{self}, req.n);
  if (st.options.resubmit)
    r.request = req;
  auto relay = r.relay;
  self->request(st.links[w].handle, caf::infinite, generate_atom::value, std::move(req),
                sink_actor{relay})
    .then([=](const admission& a) { on_admission(self, id, w, relay, a); },
          [](const caf::error&) {}); // the worker was lost: the down handler ends or moves it
}

void resubmit(front_self self, request_id id, const done_event& lost) {
  auto& st = self->state;
  auto i = st.requests.find(id);
  if (i == st.requests.end())
    return;
  auto& r = i->second;
  const size_t from = r.worker;
  auto choice = st.stopping ? std::nullopt : pick_worker(st, *r.request);
  if (!choice) {
    if (r.promise) {
      r.promise->deliver(admission{0, 0, lost.error_code, lost.error_message});
    } else { // its old relay has gone: a new one tells the client
      auto relay = spawn_relay(self->system(), id, r.client, relay_owner{self}, r.request->n);
      self->send(relay, end_atom::value, lost);
    }
    st.requests.erase(i);
    return;
  }
  ++st.links[from].requests_resubmitted;
  send_to_worker(self, id, choice->worker, std::move(*r.request)); // which keeps it again
}

runtime_actor spawn_front(caf::actor_system& sys, front_options options) {
  return sys.spawn(front_fn, std::move(options));
}

} // namespace kvactor::cluster
