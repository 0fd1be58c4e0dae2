#include "tools/bench/serving/workload.hpp"

#include "tools/load/arrivals.hpp"
#include "tools/load/draws.hpp"

#include <random>

namespace kvactor::bench {

namespace {

int32_t draw(std::mt19937_64& rng, length_range r) {
  return tools::uniform(rng, r.min, r.max);
}

std::vector<int32_t> random_tokens(std::mt19937_64& rng, int32_t n, int32_t vocab_size) {
  return tools::random_tokens(rng, n, 0, vocab_size);
}

} // namespace

std::vector<bench_request> make_requests(const workload_spec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::vector<double> weights;
  for (const auto& s : spec.shapes)
    weights.push_back(s.weight);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::bernoulli_distribution shares(spec.shared_prefix_fraction);
  tools::arrival_clock arrivals(spec.rate);
  const auto prefix = random_tokens(rng, spec.shared_prefix_len, spec.vocab_size);

  std::vector<bench_request> out;
  for (int32_t i = 0; i < spec.num_requests; ++i) {
    const request_shape& shape = spec.shapes[pick(rng)];
    bench_request r;
    if (shares(rng))
      r.request.prompt_tokens = prefix;
    const auto rest = random_tokens(rng, draw(rng, shape.prompt), spec.vocab_size);
    r.request.prompt_tokens.insert(r.request.prompt_tokens.end(), rest.begin(), rest.end());
    r.request.max_tokens = draw(rng, shape.output);
    r.request.ignore_eos = true;
    r.request.seed = spec.seed + static_cast<uint64_t>(i);
    r.request.temperature = spec.temperature;
    r.request.top_p = spec.top_p;
    r.arrival_s = arrivals.next(rng);
    out.push_back(std::move(r));
  }
  return out;
}

workload_spec mixed_workload(int32_t num_requests, uint64_t seed, int32_t vocab_size) {
  workload_spec w;
  w.name = "mixed";
  w.num_requests = num_requests;
  w.seed = seed;
  w.vocab_size = vocab_size;
  w.shapes = {{1, {16, 96}, {16, 128}},  // short chat
              {1, {256, 512}, {4, 16}},  // long prompt, short answer
              {1, {8, 32}, {128, 256}}}; // short prompt, long answer
  return w;
}

workload_spec shared_prefix_workload(int32_t num_requests, int32_t prefix_len, uint64_t seed,
                                     int32_t vocab_size) {
  workload_spec w;
  w.name = "shared-prefix";
  w.num_requests = num_requests;
  w.seed = seed;
  w.vocab_size = vocab_size;
  w.shapes = {{1, {16, 32}, {8, 16}}};
  w.shared_prefix_fraction = 1.0;
  w.shared_prefix_len = prefix_len;
  return w;
}

} // namespace kvactor::bench
