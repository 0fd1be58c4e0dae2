#pragma once
// scenarios: the runs kvactor-bench makes — one workload against a fresh
// in-process runtime per run — and the side-by-side comparisons built from
// them, each reduced to a ratio of one metric.

#include "tools/bench/serving/load_driver.hpp"
#include "tools/bench/serving/metrics.hpp"
#include "tools/bench/serving/workload.hpp"

#include <string>
#include <variant>
#include <vector>

namespace kvactor::bench {

struct run_spec {
  std::string label;
  engine_config engine;
  workload_spec workload;
  load_options load;
};

struct run_report {
  run_spec spec;
  run_metrics metrics;
};

// What every scenario shares: the engine to start from and the model's shape.
struct bench_settings {
  engine_config engine;        // model, device, threads, block size, ...
  load_options load;           // transport
  int64_t kv_bytes_per_token = 0; // of the model's KV cache
  int32_t vocab_size = 0;
  uint64_t seed = 1;
  bool quick = false;          // small workloads: checks that everything runs
};

struct comparison {
  std::string name;
  std::string metric;  // what the ratio divides
  run_report a, b;     // ratio = metric(a) / metric(b)
  double ratio = 0;
  double target = 0;   // the ratio aimed for; 0: none
};

using run_result = std::variant<run_report, std::string>;

run_result run_one(caf::actor_system& sys, const run_spec& spec);

// The comparisons by name: continuous, padded, paged, prefix, preemption.
const std::vector<std::string>& comparison_names();
std::variant<comparison, std::string> compare(caf::actor_system& sys, const std::string& name,
                                              const bench_settings& s);

// The mixed workload at each concurrency (requests in flight).
std::variant<std::vector<run_report>, std::string>
sweep(caf::actor_system& sys, const std::vector<int32_t>& concurrency, const bench_settings& s);

// 64 decode-heavy sequences at once: the runtime's overhead per step.
run_result overhead_run(caf::actor_system& sys, const bench_settings& s);

} // namespace kvactor::bench
