#pragma once
// load_driver: sends a benchmark workload to a runtime in this actor system —
// each request at its arrival time, at most `concurrency` in flight, straight
// to the runtime actor or over TCP through a server in this process — and
// records when each token arrived, while a sampler polls the runtime's
// figures (KV utilisation, running sequences) over the run.

#include "tools/bench/serving/workload.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kvactor::bench {

// Seconds after the run's start.
struct request_timing {
  bool accepted = false;
  std::string error;                // a refusal, or why the request ended early
  double sent_s = 0;
  double first_token_s = -1;
  double end_s = -1;
  int32_t num_tokens = 0;
  int32_t cached_tokens = 0;
  std::vector<double> token_gaps_s; // between consecutive tokens
};

struct figure_sample {
  double t_s = 0;
  int32_t running = 0;
  double kv_utilisation = 0;
  int32_t device_blocks_used = 0;
};

struct load_result {
  std::vector<request_timing> requests;
  std::vector<figure_sample> samples;
  double wall_s = 0;       // first send to last end
  runtime_figures end;     // the runtime's figures once every request ended
};

struct load_options {
  int32_t concurrency = 0; // most requests in flight; 0: no limit
  bool over_tcp = false;   // through the line protocol on loopback
  int32_t num_connections = 8;
  std::chrono::milliseconds sample_every{20};
  double timeout_s = 1800; // for every request to end
};

// Runs the requests to their ends; an error message if the runtime stopped
// answering or a request did not end in time.
std::optional<load_result> run_load(caf::actor_system& sys, runtime_actor runtime,
                                    const std::vector<bench_request>& requests,
                                    const load_options& options, std::string& error);

} // namespace kvactor::bench
