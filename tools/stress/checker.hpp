#pragma once
// checker: the invariants of a stress run, checked from the record book, the
// reference outputs and the runtime's figures once it is idle.

#include "tools/stress/record_book.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvactor::stress {

// The runtime's pools and queues after the run (figures or a stats line).
struct end_state {
  int32_t device_blocks_total = 0, device_blocks_used = 0;
  int32_t host_blocks_total = 0, host_blocks_free = 0;
  int32_t running = 0, waiting = 0, swapped = 0;
  std::vector<std::string> broken_invariants;
  int64_t preemptions = 0, swap_outs_refused = 0;
};

// Requests, and their choices' records; each choice ends ok, aborted or by
// an error.
struct check_result {
  int64_t num_requests = 0, num_choices = 0, num_ok = 0, num_aborted = 0, num_errors = 0;
  int64_t num_disconnected = 0, num_cancelled = 0;
  int64_t num_mismatches = 0, num_leaked_blocks = 0, num_duplicates = 0, num_missing = 0;
  std::vector<std::string> failures; // one line each, naming the request or pool

  bool passed() const { return failures.empty(); }
  // requests N choices N ok N aborted N errors N mismatches N leaked_blocks N duplicates N
  // missing N
  std::string summary() const;
};

// `reference[i]` holds the undisturbed output of request i (nullopt: the
// reference run did not finish it normally, so it is not compared).
check_result check_run(const std::vector<request_record>& records,
                       const std::vector<std::optional<std::vector<int32_t>>>& reference,
                       const std::optional<end_state>& end);

} // namespace kvactor::stress
