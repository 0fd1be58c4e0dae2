#pragma once
// kvactor-serve's three ways to run (serve.cpp picks one):
//   single node: the runtime behind the line protocol (and the HTTP front);
//   worker (--worker-port): the runtime published for fronts, no client port;
//   front (--workers): the same client protocols over a routing front.
// Each returns the process's exit code; SIGINT or SIGTERM ends it cleanly.

#include "tools/serve_config.hpp"

namespace kvactor::tools {

int serve_single(caf::actor_system& sys, const serve_config& cfg);
int serve_worker(caf::actor_system& sys, const serve_config& cfg);
int serve_front(caf::actor_system& sys, const serve_config& cfg);

} // namespace kvactor::tools
