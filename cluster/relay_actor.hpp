#pragma once
// relay_actor: one per request a front routes, the sink its worker streams
// to. It gives the events the front's request id and passes them to the
// client's sink — only once the front has told it that the client has the
// admission (a worker's first token can overtake its admission on the
// way through the front), and it tells the front when the request ended
// (each of its n choices has its done event) or when the client's sink
// went down. When the request's worker is lost, the front asks whether
// anything reached the client yet: if not, the request may start again on
// another worker, through a new relay.

#include "kvactor/kvactor.hpp"

namespace kvactor::cluster {

using admitted_atom = caf::atom_constant<caf::atom("admitted")>;
using end_atom = caf::atom_constant<caf::atom("end")>;
using ended_atom = caf::atom_constant<caf::atom("ended")>;
using gone_atom = caf::atom_constant<caf::atom("gone")>;
using lost_atom = caf::atom_constant<caf::atom("lost")>;

using relay_actor = sink_actor::extend<
  // The client has the admission: pass the events on.
  caf::reacts_to<admitted_atom>,
  // The front ends the request itself (worker lost, shutdown): this event
  // goes to the client at once for each choice that had not ended, and the
  // relay exits.
  caf::reacts_to<end_atom, done_event>,
  // The front lost the request's worker and could start it again elsewhere:
  // when nothing has reached the client yet, the relay exits quietly and
  // answers true; else it ends the request as end_atom does and answers
  // false.
  caf::replies_to<lost_atom, done_event>::with<bool>>;

// What a relay tells its front.
using relay_owner = caf::typed_actor<
  // The request's last done event went to the client.
  caf::reacts_to<ended_atom, request_id>,
  // The client's sink went down: cancel the request.
  caf::reacts_to<gone_atom, request_id>>;

relay_actor spawn_relay(caf::actor_system& sys, request_id id, sink_actor client,
                        relay_owner front, int32_t num_choices = 1);

} // namespace kvactor::cluster
