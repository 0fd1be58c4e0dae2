// kvactor-bench-sampler: microseconds per sampled row on one thread, for
// each instruction set this CPU runs, at a vocabulary size, on a flat row
// (normal logits of deviation 1, as a random model gives) and a peaked one
// (deviation 6), for greedy, the usual sampled request (temperature 0.8,
// top_p 0.95), top_k 40, min_p 0.05, penalties, and logprobs of 20; the
// median of --reps runs of --rows rows each.
//
//   kvactor-bench-sampler [--vocab=128256] [--rows=64] [--reps=5]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "model/logprobs.hpp"
#include "model/sampling/row_sampler.hpp"

using namespace kvactor;
using namespace kvactor::model;

namespace {

struct options {
  int64_t vocab = 128256;
  int rows = 64;
  int reps = 5;
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&](std::string_view name) -> const char* {
      return a.starts_with(name) ? argv[i] + name.size() : nullptr;
    };
    if (const char* vocab = value("--vocab="))
      o.vocab = std::atoll(vocab);
    else if (const char* rows = value("--rows="))
      o.rows = std::atoi(rows);
    else if (const char* reps = value("--reps="))
      o.reps = std::atoi(reps);
    else {
      std::fprintf(stderr, "usage: kvactor-bench-sampler [--vocab=N] [--rows=N] [--reps=N]\n");
      return false;
    }
  }
  return o.vocab > 0 && o.rows > 0 && o.reps > 0;
}

// Median microseconds per row of `fn(row index)` over the rows.
double per_row_us(const options& o, const std::function<void(int)>& fn) {
  std::vector<double> runs;
  for (int r = 0; r < o.reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.rows; ++i)
      fn(i);
    runs.push_back(
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      o.rows);
  }
  std::ranges::sort(runs);
  return runs[runs.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o))
    return 2;
  std::printf("vocabulary %lld, %d rows, median of %d runs, one thread (us per row)\n",
              static_cast<long long>(o.vocab), o.rows, o.reps);
  std::printf("| isa | row | greedy | T 0.8 | T 0.8, top_p 0.95 | top_k 40 | min_p 0.05 | "
              "penalties, top_p | logprobs 20 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  sampling_history history(std::vector<token_id>(200, 7));
  for (int t = 0; t < 300; ++t)
    history.add_output(token_id(t * 31 % o.vocab));
  for (double sigma : {1.0, 6.0}) {
    std::mt19937 gen(1);
    std::normal_distribution<float> d(0.0f, float(sigma));
    std::vector<std::vector<float>> rows(size_t(o.rows), std::vector<float>(size_t(o.vocab)));
    for (auto& row : rows)
      for (float& x : row)
        x = d(gen);
    auto with = [](float t, int32_t k, float top_p, float min_p) {
      sampling_params p;
      p.temperature = t;
      p.top_k = k;
      p.top_p = top_p;
      p.min_p = min_p;
      p.seed = 5;
      return p;
    };
    sampling_params penalised = with(0.8f, 0, 0.95f, 0.0f);
    penalised.repetition_penalty = 1.1f;
    penalised.frequency_penalty = 0.5f;
    const std::vector<sampling_params> cases = {
      with(0.0f, 0, 1.0f, 0.0f),  with(0.8f, 0, 1.0f, 0.0f),  with(0.8f, 0, 0.95f, 0.0f),
      with(0.8f, 40, 1.0f, 0.0f), with(0.8f, 0, 1.0f, 0.05f), penalised};
    for (sampling::row_isa isa : sampling::row_isas()) {
      const sampling::row_ops& ops = sampling::row_ops_for(isa);
      std::printf("| %s | %s |", sampling::isa_name(isa), sigma == 1.0 ? "flat" : "peaked");
      for (const sampling_params& p : cases)
        std::printf(" %.1f |", per_row_us(o, [&](int i) {
                      (void)sampling::sample_row(ops, rows[size_t(i)], p, 3, &history);
                    }));
      if (isa == sampling::row_isas().front())
        std::printf(" %.1f |\n",
                    per_row_us(o, [&](int i) { (void)logprobs(rows[size_t(i)], 0, 20); }));
      else
        std::printf(" - |\n");
    }
  }
  return 0;
}
