#pragma once
// metrics: a run's figures from what its sinks saw and the runtime reported.

#include "tools/bench/serving/load_driver.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kvactor::bench {

struct percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
};

struct run_metrics {
  int32_t num_requests = 0;
  int32_t num_ok = 0;             // ended normally
  int64_t output_tokens = 0;
  double wall_s = 0;
  double tokens_per_s = 0;        // output tokens
  double requests_per_s = 0;
  percentiles ttft_ms;            // send to first token
  percentiles itl_ms;             // between tokens of a request
  double kv_utilisation = 0;      // used / allocated slots, summed over the samples
  int32_t peak_running = 0;
  int64_t preemptions = 0;
  double prefix_hit_rate = 0;     // of full prompt blocks looked up
  int64_t steps = 0;
  double overhead_share = 0;      // of busy step time, outside the forward pass
  double planning_share = 0;      // of busy step time, planning
  double sampling_share = 0;      // of busy step time, sampling (within the forward pass)
  std::vector<std::string> errors; // the first few requests that did not end normally
};

// Nearest-rank percentiles; zeros for no values.
percentiles percentiles_of(std::vector<double> values);

run_metrics summarize(const load_result& r);

} // namespace kvactor::bench
