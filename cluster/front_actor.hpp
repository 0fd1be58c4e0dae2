#pragma once
// The front node: a runtime_actor that owns no model and routes each request
// to one of its workers (router: prefix affinity, then load), so that the
// line protocol's and the HTTP front's sessions serve over it unchanged.
//
//   front_options o;
//   o.workers = *parse_worker_list("127.0.0.1:7901,127.0.0.1:7902");
//   runtime_actor rt = spawn_front(sys, std::move(o));   // connects in the background
//
// It monitors each worker: when one goes down, its unfinished requests end
// at once with an error event (code worker_lost; with options.resubmit,
// those that had streamed nothing start again on another worker instead),
// and it is tried again every reconnect_interval, so a worker restarted on
// its port rejoins. With no live worker a request is refused as overloaded.
// A worker of another protocol version (or message interface) is refused,
// with the reason in the log and in stats. The actor system must have
// loaded caf::io::middleman.

#include "cluster/router.hpp"
#include "cluster/worker_list.hpp"
#include "kvactor/kvactor.hpp"
#include "model/tokenizer/tokenizer.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kvactor::cluster {

struct front_options {
  std::vector<endpoint> workers;
  // Tokenizes text prompts for prefix affinity (none: only prompts given as
  // tokens are affine).
  std::shared_ptr<const model::tokenizer> tokenizer;
  std::chrono::milliseconds report_interval{200};    // workers' figures asked this often
  std::chrono::milliseconds reconnect_interval{500}; // a worker not live tried again
  std::chrono::milliseconds connect_timeout{1000};   // a worker's port silent this long is down
  router_options routing;
  // A request on a lost worker that has shown its client nothing yet (no
  // token) starts again from the beginning on another live worker, instead
  // of ending with worker_lost; the front keeps each request to do so.
  bool resubmit = false;
  // Connects through CAF's OpenSSL module (the actor system must have
  // loaded caf::openssl::manager, with a certificate, key and CA file).
  bool tls = false;
  std::function<void(const std::string&)> log; // a line about a worker's state (none: quiet)
};

runtime_actor spawn_front(caf::actor_system& sys, front_options options);

} // namespace kvactor::cluster
