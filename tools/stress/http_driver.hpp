#pragma once
// http_driver: sends a workload to kvactor's OpenAI-compatible HTTP front,
// one connection per request (POST /v1/completions, streamed, with vLLM's
// return_token_ids so that every token can be checked). HTTP has no cancel:
// a cancel or a planned disconnect closes the request's connection at its
// moment, and the server must cancel the request and free its blocks. A
// malformed request (bad JSON, an unknown route, a field out of range, a
// broken request line) goes out on a connection of its own before a request
// planned so, and must be answered with a 4xx.

#include "tools/stress/checker.hpp"
#include "tools/stress/fault_plan.hpp"
#include "tools/stress/record_book.hpp"
#include "tools/stress/workload.hpp"

#include <string>

namespace kvactor::stress {

struct http_options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  double timeout_s = 600; // for every request to end
  double stall_s = 60;    // without any event: the runtime stalled, stop waiting
};

struct http_outcome {
  int64_t num_malformed_sent = 0;
  int64_t num_malformed_answered = 0; // with a 4xx status
  int64_t num_closed = 0;             // connections closed to cancel or disconnect
};

// The body of a streamed completion request for `r` (token-id prompt).
std::string completion_body(const generate_request& r);

http_outcome drive_http(const std::vector<stress_request>& workload,
                        const std::vector<request_faults>& plan, const http_options& options,
                        record_book& book);

} // namespace kvactor::stress
