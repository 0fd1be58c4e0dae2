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
  for (double p : probs)
    l.push_back(static_cast<float>(std::log(p)));
  return l;
}

// Frequencies of each token over `n` draws (steps 0..n-1).
std::vector<double> frequencies(std::span<const float> logits, const sampling_params& p, int n) {
  std::vector<double> f(logits.size(), 0.0);
  for (int s = 0; s < n; ++s)
    f[static_cast<std::size_t>(sample(logits, p, static_cast<uint64_t>(s)))] += 1.0;
  for (auto& x : f)
    x /= n;
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
    EXPECT_EQ(sample(l, {.temperature = 0.0f, .seed = seed}, seed), 1);
    EXPECT_EQ(sample(l, {.temperature = 1.5f, .top_k = 1, .seed = seed}, seed), 1);
  }
}

TEST(sampler, same_seed_and_step_give_the_same_token) {
  const auto l = logits_of({0.25, 0.25, 0.25, 0.25});
  std::vector<token_id> a, b;
  std::set<token_id> seen;
  for (uint64_t step = 0; step < 64; ++step) {
    a.push_back(sample(l, {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 1234}, step));
    b.push_back(sample(l, {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 1234}, step));
    seen.insert(a.back());
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(seen.size(), 4u); // the steps do draw differently
  std::vector<token_id> other;
  for (uint64_t step = 0; step < 64; ++step)
    other.push_back(sample(l, {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 99}, step));
  EXPECT_NE(a, other); // another seed, another run
}

TEST(sampler, follows_the_softmax_distribution) {
  const auto l = logits_of({0.5, 0.3, 0.2});
  const auto f =
    frequencies(l, {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 7}, num_draws);
  EXPECT_NEAR(f[0], 0.5, tolerance);
  EXPECT_NEAR(f[1], 0.3, tolerance);
  EXPECT_NEAR(f[2], 0.2, tolerance);
}

TEST(sampler, temperature_sharpens_and_flattens) {
  const auto l = logits_of({0.5, 0.3, 0.2});
  // T = 0.5 squares the probabilities: .25, .09, .04 over .38.
  const auto sharp =
    frequencies(l, {.temperature = 0.5f, .top_k = 0, .top_p = 1.0f, .seed = 11}, num_draws);
  EXPECT_NEAR(sharp[0], 0.25 / 0.38, tolerance);
  EXPECT_NEAR(sharp[2], 0.04 / 0.38, tolerance);
  // T = 100: nearly uniform.
  const auto flat =
    frequencies(l, {.temperature = 100.0f, .top_k = 0, .top_p = 1.0f, .seed = 11}, num_draws);
  for (double x : flat)
    EXPECT_NEAR(x, 1.0 / 3, tolerance);
}

TEST(sampler, top_k_keeps_the_k_most_likely) {
  const auto l = logits_of({0.1, 0.5, 0.15, 0.25});
  const auto f =
    frequencies(l, {.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = 5}, num_draws);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.75, tolerance);
  EXPECT_NEAR(f[3], 0.25 / 0.75, tolerance);
}

TEST(sampler, top_p_keeps_the_smallest_sufficient_set) {
  const auto l = logits_of({0.2, 0.5, 0.3});
  // 0.5 < 0.6 <= 0.5 + 0.3: tokens 1 and 2 stay.
  const auto f =
    frequencies(l, {.temperature = 1.0f, .top_k = 0, .top_p = 0.6f, .seed = 3}, num_draws);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_NEAR(f[1], 0.5 / 0.8, tolerance);
  EXPECT_NEAR(f[2], 0.3 / 0.8, tolerance);
  // 0.4 <= 0.5: only the most likely token.
  const auto g = frequencies(l, {.temperature = 1.0f, .top_k = 0, .top_p = 0.4f, .seed = 3}, 2000);
  EXPECT_EQ(g[1], 1.0);
  // top-k first, then top-p within it.
  const auto h = frequencies(l, {.temperature = 1.0f, .top_k = 1, .top_p = 0.99f, .seed = 3}, 200);
  EXPECT_EQ(h[1], 1.0);
}

TEST(sampler, min_p_keeps_tokens_near_the_most_likely) {
  const auto l = logits_of({0.5, 0.3, 0.15, 0.05});
  sampling_params p;
  p.min_p = 0.35f; // keeps p >= 0.175: tokens 0 and 1
  p.seed = 4;
  const auto f = frequencies(l, p, num_draws);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_EQ(f[3], 0.0);
  EXPECT_NEAR(f[0], 0.5 / 0.8, tolerance);
}

TEST(sampler, logit_bias_moves_a_token_in_or_out) {
  const std::vector<float> l = {0.5f, 3.0f, 0.6f};
  sampling_params greedy_p;
  greedy_p.temperature = 0.0f;
  greedy_p.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(sample(l, greedy_p, 0), 2); // the argmax banned, the next wins
  sampling_params forced;
  forced.seed = 8;
  forced.logit_bias = {{0, 100.0f}};
  for (uint64_t s = 0; s < 200; ++s)
    EXPECT_EQ(sample(l, forced, s), 0);
}

TEST(sampler, min_tokens_bans_the_end_until_then) {
  const std::vector<float> l = {0.0f, 5.0f, 1.0f}; // 1 is "EOS" and the argmax
  sampling_params p;
  p.temperature = 0.0f;
  p.min_tokens = 3;
  p.min_tokens_banned = {1};
  EXPECT_EQ(sample(l, p, 0), 2);
  EXPECT_EQ(sample(l, p, 2), 2);
  EXPECT_EQ(sample(l, p, 3), 1);
}

TEST(sampler, penalties_read_the_history) {
  const std::vector<float> l = {1.0f, 1.2f, 0.0f};
  sampling_history h;
  h.add_output(1);
  sampling_params p;
  p.temperature = 0.0f;
  p.presence_penalty = 0.5f;
  EXPECT_EQ(sample(l, p, 1, &h), 0); // 1.2 - 0.5 < 1
  p.presence_penalty = 0.0f;
  EXPECT_EQ(sample(l, p, 1, &h), 1);
}

TEST(sampler, a_row_draws_the_same_after_rows_of_other_sizes) {
  // Each thread's buffers are reused: nothing of an earlier row may leak.
  std::vector<float> big(50000);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = float((i * 7919) % 1000) / 100.0f;
  const auto small = logits_of({0.2, 0.5, 0.3});
  sampling_params p;
  p.top_p = 0.9f;
  p.seed = 77;
  std::vector<token_id> first, again;
  for (uint64_t s = 0; s < 20; ++s)
    first.push_back(sample(small, p, s));
  for (uint64_t s = 0; s < 20; ++s) {
    (void)sample(big, p, s);
    again.push_back(sample(small, p, s));
  }
  EXPECT_EQ(first, again);
}

} // namespace
} // namespace kvactor::model
