#pragma once
// tcp_driver: sends a workload to a kvactor server over the line protocol on
// C connections — a writer and a reader thread per connection — with cancel
// lines at the planned moment, malformed lines between valid ones, and
// connections dropped mid-stream (the connection then reconnects for the
// requests it has left). Reads the server's stats once it is idle
// (server_stats.hpp).

#include "tools/stress/checker.hpp"
#include "tools/stress/fault_plan.hpp"
#include "tools/stress/progress.hpp"
#include "tools/stress/record_book.hpp"
#include "tools/stress/workload.hpp"

#include <optional>
#include <string>
#include <variant>

namespace kvactor::stress {

struct tcp_options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int32_t num_connections = 4;
  double timeout_s = 600; // for every request to end
  double stall_s = 60;    // without any event: the runtime stalled, stop waiting
};

struct tcp_outcome {
  std::optional<end_state> end;
  int64_t num_malformed_sent = 0;
  int64_t num_malformed_answered = 0; // error lines without a request id
  int64_t num_disconnects = 0;
};

// The run's outcome, or an error message (could not connect).
std::variant<tcp_outcome, std::string> drive_tcp(const std::vector<stress_request>& workload,
                                                 const std::vector<request_faults>& plan,
                                                 const tcp_options& options, record_book& book);

} // namespace kvactor::stress
