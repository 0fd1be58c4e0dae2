#pragma once
// What a front node and its workers say to each other over CAF's middleman
// (BASP): a worker publishes a worker_actor, the runtime's interface plus a
// hello that names its protocol version. Every message on this path is a
// type of kvactor.hpp with an inspect overload, announced by
// add_message_types (kvactor's) and add_cluster_message_types (these).
//
//   front                                   worker (kvactor-serve --worker-port)
//     connect (middleman) ───────────────►  published worker_actor
//     hello ─────────────────────────────►  worker_hello{version, block size}
//     generate(request, relay) ──────────►  runtime ── token/done ──► relay
//     cancel / figures ──────────────────►  runtime

#include "kvactor/kvactor.hpp"

#include <cstdint>
#include <string>

namespace kvactor::cluster {

// Raised whenever a message of this path changes; a front refuses a worker
// of another version.
inline constexpr int32_t protocol_version = 3;

struct worker_hello {
  int32_t protocol_version = 0;
  int32_t block_size = 0; // tokens per KV block, for the front's prefix affinity
  std::string model;      // the worker's model folder, for messages
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_hello& x) {
  return f(caf::meta::type_name("kvactor.cluster.worker_hello"), x.protocol_version,
           x.block_size, x.model);
}

using hello_atom = caf::atom_constant<caf::atom("hello")>;

// A worker: its runtime (shutdown_atom is refused: a front never stops a
// worker) and its hello.
using worker_actor = runtime_actor::extend<caf::replies_to<hello_atom>::with<worker_hello>>;

// Announces the cluster's message types (kvactor::add_message_types
// announces the runtime's); call both before the actor system starts.
void add_cluster_message_types(caf::actor_system_config& cfg);

// Heartbeats between nodes: every 500 ms, and a peer silent for 2 s counts
// as lost (its monitors get a down message), so that a frozen or cut-off
// worker ends its requests as one that died does. The command line
// (--middleman.heartbeat-interval, --middleman.connection-timeout) overrides.
void use_cluster_heartbeats(caf::actor_system_config& cfg);

} // namespace kvactor::cluster
