#pragma once
// bridge_actor: one per connection, between its session (Asio) and the
// runtime (CAF). It submits the connection's requests with itself as their
// sink, keeps the client's ids apart from the runtime's, and turns every
// event into a protocol line for the session to write. When the connection
// closes the bridge exits; the requests' actors see their sink go down and
// cancel them.

#include "kvactor/kvactor.hpp"
#include "net/line_protocol.hpp"

#include <functional>

namespace kvactor::net {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_op& x) {
  return f(caf::meta::type_name("kvactor.net.generate_op"), x.id, x.request);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_op& x) {
  return f(caf::meta::type_name("kvactor.net.cancel_op"), x.id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stats_op&) {
  return f(caf::meta::type_name("kvactor.net.stats_op"));
}

using drain_atom = caf::atom_constant<caf::atom("drain")>;

using bridge_actor = sink_actor::extend<
  caf::reacts_to<generate_op>, caf::reacts_to<cancel_op>, caf::reacts_to<stats_op>,
  // The server is stopping: emit "" once no request of this connection is live.
  caf::reacts_to<drain_atom>>;

// emit(line) hands a formatted line to the session; it must be thread-safe
// (the session posts it to its strand). An empty line means drained.
// max_live_choices: the choices (n of each request) the connection may have
// submitted and not ended; a request past it is refused as overloaded
// without reaching the runtime (0: no limit).
bridge_actor spawn_bridge(caf::actor_system& sys, runtime_actor runtime,
                          std::function<void(std::string)> emit, int32_t max_live_choices = 0);

void add_message_types(caf::actor_system_config& cfg);

} // namespace kvactor::net
