#include "tools/stress/workload.hpp"

#include "tools/load/arrivals.hpp"
#include "tools/load/draws.hpp"

#include <random>

namespace kvactor::stress {

namespace {

// NOTE: token ids start above the byte range's control characters so that
// the tiny tokenizer decodes every prompt token to printable text.
constexpr int32_t first_token = 32;

std::vector<int32_t> random_tokens(std::mt19937_64& rng, int32_t n, int32_t vocab) {
  return tools::random_tokens(rng, n, first_token, vocab);
}

using tools::uniform;

} // namespace

std::vector<stress_request> make_workload(const workload_options& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  constexpr int32_t num_prefixes = 4;
  constexpr int32_t prefix_length = 96;
  std::vector<std::vector<int32_t>> prefixes;
  for (int32_t i = 0; i < num_prefixes; ++i)
    prefixes.push_back(random_tokens(rng, prefix_length, o.vocab_size));
  const std::vector<std::string> stops = {"a", "e", "th", "in", "o "};

  // NOTE: streams of their own, so the other fields stay those of the same seed.
  std::mt19937_64 choices_rng(o.seed ^ 0x6a09e667f3bcc908ull);
  std::mt19937_64 penalty_rng(o.seed ^ 0xbb67ae8584caa73bull);
  std::vector<stress_request> out;
  out.reserve(static_cast<size_t>(o.num_requests));
  tools::arrival_clock arrivals(o.rate);
  for (int32_t i = 0; i < o.num_requests; ++i) {
    stress_request r;
    r.index = i;
    r.connection = o.num_connections > 0 ? uniform(rng, 0, o.num_connections - 1) : 0;
    r.arrival_s = arrivals.next(rng);
    // Three shapes: short chat, long prompt / short answer, short prompt /
    // long answer.
    int32_t prompt = 0, output = 0;
    switch (uniform(rng, 0, 2)) {
    case 0: prompt = uniform(rng, 8, 48); output = uniform(rng, 8, 32); break;
    case 1: prompt = uniform(rng, 128, 256); output = uniform(rng, 2, 8); break;
    default: prompt = uniform(rng, 4, 16); output = uniform(rng, 48, 128); break;
    }
    generate_request& q = r.request;
    if (unit(rng) < o.shared_prefix_fraction) {
      q.prompt_tokens = prefixes[static_cast<size_t>(uniform(rng, 0, num_prefixes - 1))];
      auto tail = random_tokens(rng, prompt / 4 + 1, o.vocab_size);
      q.prompt_tokens.insert(q.prompt_tokens.end(), tail.begin(), tail.end());
    } else {
      q.prompt_tokens = random_tokens(rng, prompt, o.vocab_size);
    }
    q.max_tokens = output;
    q.priority = uniform(rng, 0, 2);
    q.ignore_eos = unit(rng) < 0.5;
    if (unit(rng) < o.seeded_fraction) {
      q.temperature = 0.8f;
      q.top_k = 40;
      q.top_p = 0.95f;
      q.seed = rng() >> 1;
      if (unit(choices_rng) < o.choices_fraction)
        q.n = uniform(choices_rng, 2, 4);
      if (unit(penalty_rng) < o.penalised_fraction) {
        q.presence_penalty = 0.4f;
        q.frequency_penalty = 0.3f;
        q.repetition_penalty = 1.15f;
        q.min_p = 0.02f;
        q.logit_bias = {{uniform(penalty_rng, first_token, o.vocab_size - 1), -5.0f}};
      }
    }
    if (unit(rng) < o.stop_fraction)
      q.stop = {
        stops[static_cast<size_t>(uniform(rng, 0, static_cast<int32_t>(stops.size()) - 1))]};
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<int32_t> choices_of(const std::vector<stress_request>& workload) {
  std::vector<int32_t> n;
  n.reserve(workload.size());
  for (const auto& r : workload)
    n.push_back(r.request.n);
  return n;
}

} // namespace kvactor::stress
