#pragma once
// The worker side: a worker_actor over a local runtime (its scheduler, block
// manager, swap and executor stay in this process), published through the
// middleman for fronts to connect to.
//
//   auto w = spawn_worker(sys, runtime, hello);
//   auto port = publish_worker(sys, w, "127.0.0.1", 7900);   // 0: any free port
//   ... at shutdown: shut the runtime down, then caf::anon_send_exit(w, ...)
//   (a process with a published actor does not end before it has exited).

#include "cluster/protocol.hpp"

#include <cstdint>
#include <string>

namespace kvactor::cluster {

worker_actor spawn_worker(caf::actor_system& sys, runtime_actor runtime, worker_hello hello);

// Publishes `worker` on bind:port (through CAF's OpenSSL module with
// `tls`); the bound port, or an error naming the address. The actor system
// must have loaded caf::io::middleman (and caf::openssl::manager for tls).
caf::expected<uint16_t> publish_worker(caf::actor_system& sys, const worker_actor& worker,
                                       const std::string& bind, uint16_t port, bool tls = false);

} // namespace kvactor::cluster
