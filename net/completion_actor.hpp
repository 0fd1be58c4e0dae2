#pragma once
// completion_actor: one per /v1/completions request, between its HTTP
// session and the runtime, as the bridge is for a line-protocol connection.
// It submits every prompt of the request with itself as their sink, answers
// with an error if one is refused (cancelling the others), else emits the
// response (a stream's head and chunks as they come). When its session
// closes (the client went away) it is sent an exit; the requests' actors see
// their sink go down and cancel them.

#include "net/completion.hpp"
#include "net/http_reply.hpp"
#include "net/openai_request.hpp"

#include <functional>

namespace kvactor::net {

// emit(part) hands a part of the response to the session; it must be
// thread-safe (the session posts it to its strand).
sink_actor spawn_completion(caf::actor_system& sys, runtime_actor runtime,
                            completion_request request, completion_meta meta,
                            std::function<void(reply_part)> emit);

} // namespace kvactor::net
