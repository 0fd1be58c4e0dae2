// worker_actor: forwards a front's calls to the local runtime (replies go
// straight back to the front), answers hello, and refuses shutdown.

#include "cluster/worker_actor.hpp"

#include "cluster/openssl_errors.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>

namespace kvactor::cluster {

namespace {

worker_actor::behavior_type worker_fn(worker_actor::pointer self, runtime_actor runtime,
                                      worker_hello hello) {
  return {
    [=](generate_atom, generate_request& req, sink_actor& sink) {
      return self->delegate(runtime, generate_atom::value, std::move(req), std::move(sink));
    },
    [=](cancel_atom, request_id id) { self->send(runtime, cancel_atom::value, id); },
    [=](figures_atom) { return self->delegate(runtime, figures_atom::value); },
    [=](preempt_atom, request_id id, bool swap) {
      self->send(runtime, preempt_atom::value, id, swap);
    },
    // NOTE: a worker ends only by its own signal; a front's shutdown must not
    // stop the workers other fronts share.
    [=](shutdown_atom) { return false; },
    [=](hello_atom) { return hello; },
  };
}

} // namespace

worker_actor spawn_worker(caf::actor_system& sys, runtime_actor runtime, worker_hello hello) {
  return sys.spawn(worker_fn, std::move(runtime), std::move(hello));
}

caf::expected<uint16_t> publish_worker(caf::actor_system& sys, const worker_actor& worker,
                                       const std::string& bind, uint16_t port, bool tls) {
  if (tls && !openssl_errors_isolated())
    return make_error(errc::cannot_publish, tls_unavailable);
  // NOTE: reuse_addr, so that a worker restarted at once gets its port back
  // while the killed one's connections linger in TIME_WAIT.
  auto bound = tls ? caf::openssl::publish(worker, port, bind.c_str(), true)
                   : sys.middleman().publish(worker, port, bind.c_str(), true);
  if (!bound)
    return make_error(errc::cannot_publish, "cannot publish the worker on " + bind + ":" +
                                              std::to_string(port) + ": " +
                                              sys.render(bound.error()));
  return bound;
}

void use_cluster_heartbeats(caf::actor_system_config& cfg) {
  using namespace std::chrono_literals;
  cfg.set("middleman.heartbeat-interval", caf::timespan{500ms});
  cfg.set("middleman.connection-timeout", caf::timespan{2s});
}

void add_cluster_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<worker_hello>("kvactor.cluster.worker_hello");
  cfg.add_message_type<worker_actor>("kvactor.cluster.worker_actor");
}

} // namespace kvactor::cluster
