#pragma once
// workload: the seeded requests a stress run sends — prompt and output
// lengths from a mix of shapes, some prompts sharing long prefixes, mixed
// priorities, greedy and seeded sampling (some of several choices, some
// with penalties, whose history the runner keeps across preemption), some
// stop sequences, Poisson arrivals (or all at once) spread over client
// connections.

#include "kvactor/kvactor.hpp"
#include "tools/load/arrivals.hpp"

#include <cstdint>
#include <vector>

namespace kvactor::stress {

using tools::seconds; // arrival times and the drivers' timeouts as durations

struct workload_options {
  int32_t num_requests = 2000;
  uint64_t seed = 1;
  double rate = 0;                    // requests per second; 0: all at once
  int32_t num_connections = 4;
  double shared_prefix_fraction = 0.3;
  double seeded_fraction = 0.5;       // the rest is greedy
  double stop_fraction = 0.2;
  double choices_fraction = 0.1;      // of the seeded: n of 2 to 4 choices
  double penalised_fraction = 0.3;    // of the seeded: penalties, min_p and a logit_bias
  int32_t vocab_size = 512;
};

struct stress_request {
  int32_t index = 0;
  generate_request request;
  double arrival_s = 0; // seconds after the start
  int32_t connection = 0;
};

// The requests in arrival order (index == position).
std::vector<stress_request> make_workload(const workload_options& options);
// Each request's n, the choices a record_book keeps records of.
std::vector<int32_t> choices_of(const std::vector<stress_request>& workload);

} // namespace kvactor::stress
