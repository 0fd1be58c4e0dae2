// Log probabilities of a row of logits: values, order, ties, NaN and -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "model/logprobs.hpp"

namespace kvactor::model {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

TEST(logprobs, are_the_log_softmax_of_the_row) {
  const std::vector<float> logits{1.0f, 3.0f, 2.0f};
  const double log_total = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0));
  const token_logprobs l = logprobs(logits, 2, 2);
  EXPECT_NEAR(l.logprob, 2.0 - log_total, 1e-6);
  ASSERT_EQ(l.top.size(), 2u);
  EXPECT_EQ(l.top[0].token, 1);
  EXPECT_NEAR(l.top[0].logprob, 3.0 - log_total, 1e-6);
  EXPECT_EQ(l.top[1].token, 2);
  EXPECT_FLOAT_EQ(l.top[1].logprob, l.logprob);
}

TEST(logprobs, of_every_token_sum_to_one) {
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(float(i)) * 7.0f;
  const token_logprobs l = logprobs(logits, 0, 100);
  ASSERT_EQ(l.top.size(), 100u);
  double total = 0;
  for (size_t i = 0; i < l.top.size(); ++i) {
    total += std::exp(double(l.top[i].logprob));
    if (i > 0) {
      EXPECT_GE(l.top[i - 1].logprob, l.top[i].logprob) << "most likely first, at " << i;
    }
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(logprobs, stay_finite_for_large_logits) {
  const token_logprobs l = logprobs(std::vector<float>{1000.0f, 999.0f}, 1, 1);
  EXPECT_NEAR(l.logprob, -1.0 - std::log1p(std::exp(-1.0)), 1e-5);
  EXPECT_NEAR(l.top[0].logprob, -std::log1p(std::exp(-1.0)), 1e-5);
}

TEST(logprobs, ties_list_the_lower_id_first_and_k_is_clamped) {
  const token_logprobs l = logprobs(std::vector<float>{0.5f, 2.0f, 2.0f, 0.5f}, 0, 9);
  ASSERT_EQ(l.top.size(), 4u);
  EXPECT_EQ(l.top[0].token, 1);
  EXPECT_EQ(l.top[1].token, 2);
  EXPECT_EQ(l.top[2].token, 0);
  EXPECT_EQ(l.top[3].token, 3);
  EXPECT_TRUE(logprobs(std::vector<float>{1.0f, 2.0f}, 0, 0).top.empty());
}

TEST(logprobs, nan_and_minus_infinity_are_impossible) {
  const std::vector<float> logits{std::nanf(""), 0.0f, -inf, 0.0f};
  const token_logprobs l = logprobs(logits, 0, 4);
  EXPECT_EQ(l.logprob, -inf);
  EXPECT_NEAR(l.top[0].logprob, std::log(0.5), 1e-6);
  EXPECT_EQ(l.top[0].token, 1);
  EXPECT_EQ(l.top[1].token, 3);
  EXPECT_EQ(l.top[2].logprob, -inf);
  EXPECT_EQ(l.top[3].logprob, -inf);
  // A row with no finite logit has no distribution: everything is -inf.
  EXPECT_EQ(logprobs(std::vector<float>{-inf, std::nanf("")}, 1, 1).top[0].logprob, -inf);
}

} // namespace
} // namespace kvactor::model
