#pragma once
// The front actor's state: its links to the workers, the routing table and
// the requests in flight (front_actor.cpp, front_links.cpp).

#include "cluster/front_actor.hpp"
#include "cluster/protocol.hpp"
#include "cluster/relay_actor.hpp"

#include <optional>
#include <unordered_map>

namespace kvactor::cluster {

using tick_atom = caf::atom_constant<caf::atom("tick")>;

using front_actor = runtime_actor::extend<
  caf::reacts_to<tick_atom>, // ask the live workers' figures, retry the others
  caf::reacts_to<ended_atom, request_id>, caf::reacts_to<gone_atom, request_id>>;

enum class link_state { connecting, live, down, refused };
const char* to_string(link_state s);

struct worker_link {
  endpoint address;
  link_state state = link_state::connecting;
  std::string message;           // why down or refused
  worker_actor handle;           // while live
  bool attempt_in_flight = false;
  std::chrono::steady_clock::time_point next_attempt{};
  runtime_figures last;          // its last report
  int64_t requests_resubmitted = 0; // lost with it, started again elsewhere
};

struct routed_request {
  size_t worker = 0;
  bool admitted = false;    // by that worker; false again while it moves to another
  request_id worker_id = 0; // the worker's id, once admitted
  relay_actor relay;
  sink_actor client;
  bool cancelled = false;   // cancel once admitted
  std::optional<caf::typed_response_promise<admission>> promise; // until the client is answered
  std::optional<generate_request> request; // kept to start again (front_options::resubmit)
};

struct front_state {
  front_state() = default;
  front_options options;
  std::vector<worker_link> links;
  std::optional<router> routes;
  std::unordered_map<request_id, routed_request> requests;
  request_id next_id = 1;
  int32_t block_size = 0; // the first worker's, for prefix keys
  bool stopping = false;
};

using front_self = front_actor::stateful_pointer<front_state>;

// front_actor.cpp: sends request `id` (its entry made, or moved off a lost
// worker) to worker w through a fresh relay.
void send_to_worker(front_self self, request_id id, size_t w, generate_request req);
// Starts request `id` again on another worker, or ends it with `lost`.
void resubmit(front_self self, request_id id, const done_event& lost);

// front_links.cpp: the workers' links.
void connect(front_self self, size_t w);
void on_tick(front_self self);
void on_down(front_self self, const caf::down_msg& dm);
// Ends every request (on worker w) with this event (worker lost, shutdown).
void end_requests(front_self self, std::optional<size_t> w, const done_event& how,
                  const admission& refusal);
// A worker's report as the router reads it.
worker_load load_of(const runtime_figures& f);
runtime_figures front_figures(front_self self, const std::vector<struct addressed_figures>& parts);

} // namespace kvactor::cluster
