#pragma once
// fault_plan: which faults a stress run injects, drawn from the seed apart
// from the workload (so the reference run sees the very same requests).

#include "tools/stress/workload.hpp"

#include <cstdint>
#include <vector>

namespace kvactor::stress {

struct fault_options {
  uint64_t seed = 1;
  double cancel_fraction = 0;
  int32_t preempt_every = 0;       // steps between forced preemptions (in-process); 0: none
  double disconnect_fraction = 0;  // of requests whose connection drops mid-stream (TCP)
  double malformed_fraction = 0;   // of requests preceded by a malformed line (TCP)
  int32_t jitter_ms = 0;           // a cancel goes out 0..jitter_ms after its moment
};

// When a request is cancelled: right after it is sent (over TCP, before its
// acceptance; in-process, right after its admission) or once token `index`
// has arrived.
inline constexpr int32_t cancel_at_once = -1;
inline constexpr int32_t no_fault = -2;

struct request_faults {
  int32_t cancel_at = no_fault;     // cancel_at_once or a token index
  int32_t disconnect_at = no_fault; // token index after which its connection drops
  bool malformed_before = false;
  int32_t cancel_delay_ms = 0;      // after cancel_at's moment (jitter)
};

// One entry per request; a request gets at most one of cancel / disconnect.
std::vector<request_faults> make_fault_plan(const std::vector<stress_request>& workload,
                                            const fault_options& options);

} // namespace kvactor::stress
