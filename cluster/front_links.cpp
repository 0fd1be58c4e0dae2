// The front's links to its workers: connecting (a check that the port
// answers, then the middleman's own actor, so no thread of the front's
// blocks), the version check, the periodic figures, and what a lost worker
// ends or moves.

#include "cluster/figures_sum.hpp"
#include "cluster/front_state.hpp"
#include "cluster/openssl_errors.hpp"
#include "cluster/tcp_reach.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

namespace kvactor::cluster {

const char* to_string(link_state s) {
  switch (s) {
    case link_state::connecting: return "connecting";
    case link_state::live: return "live";
    case link_state::down: return "down";
    case link_state::refused: return "refused";
  }
  return "?";
}

namespace {

using namespace std::chrono_literals;

void log(front_self self, const std::string& line) {
  if (self->state.options.log)
    self->state.options.log(line);
}

// The link failed to come up: down (tried again) or refused (tried again
// too: it may be replaced by a compatible worker on the same port).
void fail(front_self self, size_t w, link_state state, std::string message) {
  auto& link = self->state.links[w];
  link.attempt_in_flight = false;
  link.next_attempt = std::chrono::steady_clock::now() + self->state.options.reconnect_interval;
  if (link.state != state || link.message != message)
    log(self, "worker " + link.address.str() +
                (state == link_state::refused ? " refused: " : " down: ") + message);
  link.state = state;
  link.message = std::move(message);
}

void join(front_self self, size_t w, worker_actor handle, const worker_hello& hello) {
  auto& st = self->state;
  auto& link = st.links[w];
  link.attempt_in_flight = false;
  link.state = link_state::live;
  link.message.clear();
  link.handle = handle;
  link.last = {};
  if (st.block_size == 0)
    st.block_size = hello.block_size;
  self->monitor(handle);
  st.routes->set_live(w, {});
  log(self, "worker " + link.address.str() + " joined (model " + hello.model + ", block size " +
              std::to_string(hello.block_size) + ")");
  self->request(handle, 5s, figures_atom::value).then([=](const runtime_figures& f) {
    auto& l = self->state.links[w];
    if (l.handle == handle) {
      l.last = f;
      self->state.routes->report(w, load_of(f));
    }
  });
}

void check_hello(front_self self, size_t w, worker_actor handle, const worker_hello& hello) {
  if (hello.protocol_version != protocol_version)
    return fail(self, w, link_state::refused,
                "it speaks cluster protocol version " + std::to_string(hello.protocol_version) +
                  ", this front speaks version " + std::to_string(protocol_version));
  join(self, w, std::move(handle), hello);
}

using reach_atom = caf::atom_constant<caf::atom("reach")>;
// Connects through the middleman (or, with TLS, the OpenSSL manager's own
// actor), so no thread of the front's blocks, and checks what answers.
void connect_node(front_self self, size_t w) {
  auto& link = self->state.links[w];
  auto& sys = self->system();
  auto connector = self->state.options.tls ? sys.openssl_manager().actor_handle()
                                           : sys.middleman().actor_handle();
  self->request(connector, caf::infinite, caf::connect_atom::value,
                link.address.host, link.address.port)
    .then(
      [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
        if (!ptr)
          return fail(self, w, link_state::down, "nothing is published there");
        if (ifs != self->system().message_types(caf::detail::type_list<worker_actor>{}))
          return fail(self, w, link_state::refused,
                      "it offers another message interface (not a kvactor worker, or one of "
                      "an incompatible version)");
        auto handle = caf::actor_cast<worker_actor>(std::move(ptr));
        self->request(handle, 5s, hello_atom::value)
          .then([=](const worker_hello& hello) { check_hello(self, w, handle, hello); },
                [=](const caf::error& e) {
                  fail(self, w, link_state::down, "no hello: " + self->system().render(e));
                });
      },
      [=](const caf::error& e) {
        fail(self, w, link_state::down, "cannot connect: " + self->system().render(e));
      });
}

} // namespace

// NOTE: the middleman's connect blocks its one actor until the operating
// system gives up on an address that does not answer (minutes), and every
// other worker's connect waits behind it; a detached actor first checks
// that the port answers within connect_timeout (tcp_reach.hpp).
void connect(front_self self, size_t w) {
  auto& link = self->state.links[w];
  link.attempt_in_flight = true;
  if (self->state.options.tls && !openssl_errors_isolated())
    return fail(self, w, link_state::refused, tls_unavailable);
  auto probe = self->spawn<caf::detached>([](caf::event_based_actor* p) -> caf::behavior {
    return {[=](reach_atom, const std::string& host, uint16_t port, caf::timespan timeout) {
      p->quit();
      return tcp_reach(host, port, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
    }};
  });
  self->request(probe, caf::infinite, reach_atom::value, link.address.host, link.address.port,
                caf::timespan{self->state.options.connect_timeout})
    .then(
      [=](const std::string& why) {
        if (!why.empty())
          return fail(self, w, link_state::down, "cannot connect: " + why);
        connect_node(self, w);
      },
      [=](const caf::error& e) {
        fail(self, w, link_state::down, "cannot connect: " + self->system().render(e));
      });
}

void on_tick(front_self self) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  for (size_t w = 0; w < st.links.size(); ++w) {
    auto& link = st.links[w];
    if (link.state == link_state::live) {
      auto handle = link.handle;
      self->request(handle, 2s, figures_atom::value)
        .then(
          [=](const runtime_figures& f) {
            auto& l = self->state.links[w];
            if (l.handle == handle && l.state == link_state::live) {
              l.last = f;
              self->state.routes->report(w, load_of(f));
            }
          },
          [](const caf::error&) {}); // down or busy: the monitor tells which
    } else if (!link.attempt_in_flight && now >= link.next_attempt) {
      connect(self, w);
    }
  }
}

void end_requests(front_self self, std::optional<size_t> w, const done_event& how,
                  const admission& refusal) {
  auto& st = self->state;
  for (auto i = st.requests.begin(); i != st.requests.end();) {
    auto& r = i->second;
    if (w && r.worker != *w) {
      ++i;
      continue;
    }
    if (r.promise) { // the client has no answer yet: the refusal is the answer
      r.promise->deliver(refusal);
      caf::anon_send_exit(r.relay, caf::exit_reason::user_shutdown);
    } else {
      self->send(r.relay, end_atom::value, how);
    }
    i = st.requests.erase(i);
  }
}

namespace {

// Worker w is lost: each of its requests that showed its client nothing
// yet (its relay says) starts again on another worker.
void resubmit_requests_on(front_self self, size_t w, const done_event& lost) {
  auto& st = self->state;
  for (auto& [id, r] : st.requests) {
    if (r.worker != w)
      continue;
    r.admitted = false; // a cancel now waits for the next worker's admission
    if (r.promise) {    // not admitted: its relay held everything back
      caf::anon_send_exit(r.relay, caf::exit_reason::user_shutdown);
      resubmit(self, id, lost);
      continue;
    }
    const request_id rid = id;
    self->request(r.relay, caf::infinite, lost_atom::value, lost)
      .then(
        [=](bool restart) {
          if (restart)
            resubmit(self, rid, lost);
          else
            self->state.requests.erase(rid);
        },
        [=](const caf::error&) { self->state.requests.erase(rid); }); // the client went away
  }
}

} // namespace

void on_down(front_self self, const caf::down_msg& dm) {
  auto& st = self->state;
  for (size_t w = 0; w < st.links.size(); ++w) {
    auto& link = st.links[w];
    if (link.state != link_state::live || link.handle.address() != dm.source)
      continue;
    const std::string why = "worker " + link.address.str() + " was lost (" +
                            self->system().render(dm.reason) + ")";
    done_event lost;
    lost.finish_reason = finish_reason::error;
    lost.error_code = errc::worker_lost;
    lost.error_message = why;
    st.routes->set_lost(w);
    if (st.options.resubmit)
      resubmit_requests_on(self, w, lost);
    else
      end_requests(self, w, lost, admission{0, 0, errc::worker_lost, why});
    link.handle = nullptr;
    link.next_attempt = std::chrono::steady_clock::now() + st.options.reconnect_interval;
    fail(self, w, link_state::down, "lost (" + self->system().render(dm.reason) + ")");
    return;
  }
}

// NOTE: cached blocks count as available: a reservation evicts them, and a
// worker whose prefix cache has filled its pool is not out of blocks.
worker_load load_of(const runtime_figures& f) {
  return {f.device_blocks_free + f.device_blocks_cached, f.waiting};
}

runtime_figures front_figures(front_self self, const std::vector<addressed_figures>& parts) {
  auto& st = self->state;
  runtime_figures f = sum_figures(parts);
  for (size_t w = 0; w < st.links.size(); ++w) {
    const auto& link = st.links[w];
    worker_figures x;
    x.address = link.address.str();
    x.state = to_string(link.state);
    x.message = link.message;
    if (link.state == link_state::live) {
      x.device_blocks_total = link.last.device_blocks_total;
      x.device_blocks_free = link.last.device_blocks_free;
      x.running = link.last.running;
      x.waiting = link.last.waiting;
    }
    x.requests_routed = st.routes->num_routed(w);
    x.requests_live = st.routes->num_live_requests(w);
    x.requests_resubmitted = link.requests_resubmitted;
    f.workers.push_back(std::move(x));
  }
  return f;
}

} // namespace kvactor::cluster
