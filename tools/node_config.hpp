#pragma once
// What a process that serves, or drives a server, announces and loads in
// its actor system: kvactor's, the line protocol's and the cluster's message
// types, the serving scheduler's settings, the cluster's heartbeats and
// CAF's middleman. Call from an actor_system_config's constructor.

#include "cluster/protocol.hpp"
#include "net/bridge.hpp"

#include <caf/io/middleman.hpp>

namespace kvactor::tools {

inline void configure_node(caf::actor_system_config& cfg) {
  kvactor::add_message_types(cfg);
  kvactor::use_serving_scheduler(cfg);
  kvactor::net::add_message_types(cfg);
  kvactor::cluster::add_cluster_message_types(cfg);
  kvactor::cluster::use_cluster_heartbeats(cfg);
  cfg.load<caf::io::middleman>();
}

} // namespace kvactor::tools
