#pragma once
// tcp_driver: sends a benchmark's requests to a kvactor server over the line
// protocol — request i on connection i % C, a reader thread per connection —
// and records what comes back in the tracker.

#include "tools/bench/serving/request_tracker.hpp"
#include "tools/bench/serving/workload.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kvactor::bench {

struct tcp_target {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int32_t num_connections = 8;
};

// Returns once every request was sent (each at its arrival time, at most
// `concurrency` in flight) and every reader has seen its requests end or its
// connection close; an error message if a connection could not be opened.
std::optional<std::string> send_over_tcp(const tcp_target& target,
                                         const std::vector<bench_request>& requests,
                                         int32_t concurrency, request_tracker& t);

} // namespace kvactor::bench
