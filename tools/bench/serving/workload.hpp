#pragma once
// workload: the seeded requests of a benchmark run — prompt and output
// lengths drawn from a mix of shapes, a fraction of prompts starting with one
// shared prefix, arrivals as a Poisson process (or all at once). Prompts are
// token ids and every request ignores EOS, so a run's work is exactly known.

#include "kvactor/kvactor.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kvactor::bench {

struct length_range {
  int32_t min = 1;
  int32_t max = 1; // inclusive
};

struct request_shape {
  double weight = 1;
  length_range prompt;
  length_range output;
};

struct workload_spec {
  std::string name;
  int32_t num_requests = 128;
  uint64_t seed = 1;
  double rate = 0;        // requests per second (Poisson); 0: all at once
  std::vector<request_shape> shapes;
  double shared_prefix_fraction = 0; // of the prompts, these start with ...
  int32_t shared_prefix_len = 0;     // ... the same this many tokens
  int32_t vocab_size = 512;          // token ids are drawn below this
  float temperature = 0;             // every request's; 0: greedy
  float top_p = 1;
};

// What users send: OpenAI's clients and chat UIs sample, seeded here.
inline constexpr float sampled_temperature = 0.8f;
inline constexpr float sampled_top_p = 0.95f;

struct bench_request {
  generate_request request;
  double arrival_s = 0; // seconds after the start
};

// The requests in arrival order.
std::vector<bench_request> make_requests(const workload_spec& spec);

// Short chat, long prompt with a short answer, short prompt with a long
// answer, in equal parts.
workload_spec mixed_workload(int32_t num_requests, uint64_t seed, int32_t vocab_size);

// `num_requests` prompts of a `prefix_len`-token shared prefix and a short
// suffix each, short answers.
workload_spec shared_prefix_workload(int32_t num_requests, int32_t prefix_len, uint64_t seed,
                                     int32_t vocab_size);

} // namespace kvactor::bench
