#include "model/sampler.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

// Logits whose softmax is `probs`.
std::vector<float> logits_of(std::initializer_list<double> probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

// Frequencies of each token over `n` draws (steps 0..n-1).
std::vector<double> frequencies(std::span<const float> logits, const sampling_params& p, int n) {
  std::vector<double> f(logits.size(), 0.0);
  for (int s = 0; s < n; ++s)
    f[static_cast<std::size_t>(sample(logits, p, static_cast<uint64_t>(s)))] += 1.0;
  for (auto& x : f) x /= n;
  return f;
}

constexpr int num_draws = 20000;
// NOTE: one draw's standard error here is at most sqrt(0.25 / 20000) = 0.0035;
// 0.02 is a loose bound (over 5 sigma) that a wrong distribution still fails.
constexpr double tolerance = 0.02;

TEST(sampler, greedy_picks_the_argmax) {
  EXPECT_EQ(greedy(std::vector<float>{0.1f, 3.0f, -2.0f, 2.9f}), 1);
  EXPECT_EQ(greedy(std::vector<float>{1.0f, 5.0f, 5.0f}), 1); // lowest index on ties
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(greedy(std::vector<float>{nan, -1.0f, nan}), 1);
  EXPECT_EQ(greedy(std::vector<float>{-std::numeric_limits<float>::infinity(), -1e30f}), 1);
}

TEST(sampler, temperature_zero_and_top_k_one_are_greedy) {
  const std::vector<float> l = {0.5f, 0.7f, 0.6f, -1.0f};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(sample(l, {0.0f, 0, 1.0f, seed}, seed), 1);
    EXPECT_EQ(sample(l, {1.5f, 1, 1.0f, seed}, seed), 1);
  }
}

TEST(sampler, same_seed_and_step_give_the_same_token) {
  const auto l = logits_of({0.25, 0.25, 0.25, 0.25});
  std::vector<token_id> a, b;
  std::set<token_id> seen;
  for (uint64_t step = 0; step < 64; ++step) {
    a.push_back(sample(l, {1.0f, 0, 1.0f, 1234}, step));
    b.push_back(sample(l, {1.0f, 0, 1.0f, 1234}, step));
    seen.insert(a.back());
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(seen.size(), 4u); // the steps do draw differently
  std::vector<token_id> other;
  for (uint64_t step = 0; step < 64; ++step) other.push_back(sample(l, {1.0f, 0, 1.0f, 99}, step));
  EXPECT_NE(a, other); // another seed, another run
}

TEST(sampler, follows_the_softmax_distribution) {
  const auto l = logits_of({0.5, 0.3, 0.2});
  const auto f = frequencies(l, {1.0f, 0, 1.0f, 7}, num_draws);
  EXPECT_NEAR(f[0], 0.5, tolerance);
  EXPECT_NEAR(f[1], 0.3, tolerance);
  EXPECT_NEAR(f[2], 0.2, tolerance);
}

TEST(sampler, temperature_sharpens_and_flattens) {
  const auto l = logits_of({0.5, 0.3, 0.2});
  // T = 0.5 squares the probabilities: .25, .09, .04 over .38.
  const auto sharp = frequencies(l, {0.5f, 0, 1.0f, 11}, num_draws);
  EXPECT_NEAR(sharp[0], 0.25 / 0.38, tolerance);
  EXPECT_NEAR(sharp[2], 0.04 / 0.38, tolerance);
  // T = 100: nearly uniform.
  const auto flat = frequencies(l, {100.0f, 0, 1.0f, 11}, num_draws);
  for (double x : flat) EXPECT_NEAR(x, 1.0 / 3, tolerance);
}

TEST(sampler, top_k_keeps_the_k_most_likely) {
  const auto l = logits_of({0.1, 0.5, 0.15, 0.25});
  const auto f = frequencies(l, {1.0f, 2, 1.0f, 5}, num_draws);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.75, tolerance);
  EXPECT_NEAR(f[3], 0.25 / 0.75, tolerance);
}

TEST(sampler, top_p_keeps_the_smallest_sufficient_set) {
  const auto l = logits_of({0.2, 0.5, 0.3});
  // 0.5 < 0.6 <= 0.5 + 0.3: tokens 1 and 2 stay.
  const auto f = frequencies(l, {1.0f, 0, 0.6f, 3}, num_draws);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.8, tolerance);
  EXPECT_NEAR(f[2], 0.3 / 0.8, tolerance);
  // 0.4 <= 0.5: only the most likely token.
  const auto g = frequencies(l, {1.0f, 0, 0.4f, 3}, 2000);
  EXPECT_EQ(g[1], 1.0);
  // top-k first, then top-p within it.
  const auto h = frequencies(l, {1.0f, 1, 0.99f, 3}, 200);
  EXPECT_EQ(h[1], 1.0);
}

TEST(sampler, validates_parameters) {
  EXPECT_TRUE(validate({}));
  EXPECT_FALSE(validate({-1.0f, 0, 1.0f, 0}));
  EXPECT_FALSE(validate({std::numeric_limits<float>::quiet_NaN(), 0, 1.0f, 0}));
  EXPECT_FALSE(validate({1.0f, -3, 1.0f, 0}));
  EXPECT_FALSE(validate({1.0f, 0, 0.0f, 0}));
  EXPECT_FALSE(validate({1.0f, 0, 1.5f, 0}));
}

} // namespace
} // namespace kvactor::model
