// The fast sampler against the reference distribution (reference_sampler.hpp)
// on every instruction set this CPU runs: a chi-square test of the sampled
// frequencies, over fixed seeds so that it cannot flake, and no draw outside
// the kept set, on small rows and on rows of Llama 3's vocabulary size.

#include "model/sampling/row_sampler.hpp"
#include "reference_sampler.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model::sampling {
namespace {

std::vector<float> normal_logits(size_t n, double sigma, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, float(sigma));
  std::vector<float> l(n);
  for (float& x : l)
    x = d(gen);
  return l;
}

struct filter_case {
  std::string name;
  sampling_params params;
};

std::vector<filter_case> filter_cases() {
  auto with = [](float t, int32_t k, float top_p, float min_p) {
    sampling_params p;
    p.temperature = t;
    p.top_k = k;
    p.top_p = top_p;
    p.min_p = min_p;
    p.seed = 42;
    return p;
  };
  return {{"temperature", with(1.0f, 0, 1.0f, 0.0f)}, {"top_p", with(0.8f, 0, 0.95f, 0.0f)},
          {"small_top_p", with(1.0f, 0, 0.5f, 0.0f)}, {"top_k", with(1.0f, 10, 1.0f, 0.0f)},
          {"min_p", with(0.7f, 0, 1.0f, 0.1f)},       {"all_filters", with(1.2f, 20, 0.9f, 0.02f)}};
}

// sum (observed - expected)^2 / expected over the kept tokens, and whether
// any draw fell outside them.
struct chi_square {
  double value = 0;
  int num_kept = 0;
  int outside = 0;
};

chi_square test_draws(const row_ops& ops, std::span<const float> logits, const sampling_params& p,
                      int num_draws) {
  const auto prob = testing::reference_distribution(logits, p);
  std::vector<int> seen(logits.size(), 0);
  for (int s = 0; s < num_draws; ++s)
    ++seen[size_t(sample_row(ops, logits, p, uint64_t(s), nullptr))];
  chi_square c;
  for (size_t i = 0; i < prob.size(); ++i) {
    if (prob[i] == 0) {
      c.outside += seen[i];
      continue;
    }
    ++c.num_kept;
    const double expected = prob[i] * num_draws;
    c.value += (seen[i] - expected) * (seen[i] - expected) / expected;
  }
  return c;
}

// NOTE: a chi-square of df degrees of freedom has mean df and standard
// deviation sqrt(2 df); 6 deviations above is beyond a 1e-6 tail, while a
// wrong filter or temperature gives values in the thousands here.
double bound(int df) {
  return df + 6 * std::sqrt(2.0 * df) + 10;
}

TEST(sampler_distribution, follows_the_filtered_distribution_on_every_isa) {
  const auto logits = normal_logits(64, 1.0, 7);
  for (row_isa isa : row_isas())
    for (const filter_case& c : filter_cases()) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + c.name);
      const chi_square chi = test_draws(row_ops_for(isa), logits, c.params, 20000);
      EXPECT_EQ(chi.outside, 0);
      EXPECT_GT(chi.num_kept, 1);
      EXPECT_LT(chi.value, bound(chi.num_kept - 1));
    }
}

TEST(sampler_distribution, a_wrong_temperature_fails_the_test) {
  // The test's power: draws at T = 1 judged against T = 0.8's distribution.
  const auto logits = normal_logits(64, 2.0, 7);
  sampling_params drawn;
  drawn.seed = 3;
  sampling_params judged = drawn;
  judged.temperature = 0.8f;
  const auto prob = testing::reference_distribution(logits, judged);
  std::vector<int> seen(logits.size(), 0);
  for (int s = 0; s < 20000; ++s)
    ++seen[size_t(sample_row(best_row_ops(), logits, drawn, uint64_t(s), nullptr))];
  double chi = 0;
  for (size_t i = 0; i < prob.size(); ++i)
    if (prob[i] > 0)
      chi += (seen[i] - prob[i] * 20000) * (seen[i] - prob[i] * 20000) / (prob[i] * 20000);
  EXPECT_GT(chi, bound(63));
}

TEST(sampler_distribution, large_rows_draw_only_kept_tokens) {
  // Llama 3's vocabulary; a flat row (a random model's) and a peaked one.
  constexpr size_t vocab = 128256;
  for (double sigma : {1.0, 6.0}) {
    const auto logits = normal_logits(vocab, sigma, 11);
    for (const filter_case& c : filter_cases()) {
      if (c.params.top_p == 1.0f && c.params.top_k == 0 && c.params.min_p == 0.0f)
        continue;
      const auto prob = testing::reference_distribution(logits, c.params);
      for (row_isa isa : row_isas()) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " " + c.name + " sigma " + std::to_string(sigma));
        int outside = 0;
        for (uint64_t s = 0; s < 200; ++s)
          outside += prob[size_t(sample_row(row_ops_for(isa), logits, c.params, s, nullptr))] == 0;
        EXPECT_EQ(outside, 0);
      }
    }
  }
}

TEST(sampler_distribution, top_tokens_of_a_large_row_come_at_their_rates) {
  // A peaked row of 128k ids whose top tokens hold most of the mass: their
  // frequencies under top_p 0.95 against the reference's.
  auto logits = normal_logits(128256, 1.0, 5);
  for (size_t i = 0; i < 8; ++i)
    logits[1000 * i + 3] = 14.0f - float(i);
  sampling_params p;
  p.temperature = 0.8f;
  p.top_p = 0.95f;
  p.seed = 9;
  const auto prob = testing::reference_distribution(logits, p);
  for (row_isa isa : row_isas()) {
    SCOPED_TRACE(isa_name(isa));
    std::vector<int> seen(logits.size(), 0);
    constexpr int draws = 4000;
    for (int s = 0; s < draws; ++s)
      ++seen[size_t(sample_row(row_ops_for(isa), logits, p, uint64_t(s), nullptr))];
    double chi = 0;
    int outside = 0;
    for (size_t i = 0; i < prob.size(); ++i) {
      if (prob[i] == 0)
        outside += seen[i];
      else
        chi += (seen[i] - prob[i] * draws) * (seen[i] - prob[i] * draws) / (prob[i] * draws);
    }
    int num_kept = 0;
    for (double q : prob)
      num_kept += q > 0;
    EXPECT_EQ(outside, 0);
    EXPECT_LT(chi, bound(num_kept - 1));
  }
}

} // namespace
} // namespace kvactor::model::sampling
