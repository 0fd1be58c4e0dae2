// The runtime's rules for a generate_request's fields (request_fields), each
// at its bounds: the value just inside is taken, the one just outside is
// refused with a message naming the field.

#include "actors/requests/request_fields.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvactor {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();

// `wrong` is a refusal that names `field` first ("<field> must be ...").
void expect_refused(const std::optional<std::string>& wrong, std::string_view field,
                    std::string_view what) {
  ASSERT_TRUE(wrong.has_value()) << what;
  EXPECT_THAT(*wrong, StartsWith(std::string(field) + " must be")) << what;
}

TEST(request_fields, max_tokens_lies_in_one_to_the_limit) {
  EXPECT_FALSE(check_max_tokens(1));
  EXPECT_FALSE(check_max_tokens(max_max_tokens));
  expect_refused(check_max_tokens(0), "max_tokens", "0");
  expect_refused(check_max_tokens(int64_t{max_max_tokens} + 1), "max_tokens", "limit + 1");
}

TEST(request_fields, temperature_lies_in_zero_to_its_maximum) {
  EXPECT_FALSE(check_temperature(0));
  EXPECT_FALSE(check_temperature(max_temperature));
  expect_refused(check_temperature(-1e-9), "temperature", "below 0");
  expect_refused(check_temperature(max_temperature * 1.001), "temperature", "above");
  expect_refused(check_temperature(not_a_number), "temperature", "NaN");
}

TEST(request_fields, top_k_takes_minus_one_and_zero_as_all) {
  EXPECT_FALSE(check_top_k(-1));
  EXPECT_FALSE(check_top_k(0));
  EXPECT_FALSE(check_top_k(int32_max));
  expect_refused(check_top_k(-2), "top_k", "-2");
  expect_refused(check_top_k(int32_max + 1), "top_k", "past int32");
}

TEST(request_fields, top_p_lies_in_zero_exclusive_to_one) {
  EXPECT_FALSE(check_top_p(1));
  EXPECT_FALSE(check_top_p(1e-9));
  expect_refused(check_top_p(0), "top_p", "0");
  expect_refused(check_top_p(1.0000001), "top_p", "above 1");
  expect_refused(check_top_p(not_a_number), "top_p", "NaN");
}

TEST(request_fields, min_p_lies_in_zero_to_one) {
  EXPECT_FALSE(check_min_p(0));
  EXPECT_FALSE(check_min_p(1));
  expect_refused(check_min_p(-1e-9), "min_p", "below 0");
  expect_refused(check_min_p(1.0000001), "min_p", "above 1");
  expect_refused(check_min_p(not_a_number), "min_p", "NaN");
}

TEST(request_fields, presence_and_frequency_penalties_lie_in_minus_two_to_two) {
  using rule = std::optional<std::string> (*)(double);
  const std::pair<rule, const char*> penalties[] = {
    {check_presence_penalty, "presence_penalty"}, {check_frequency_penalty, "frequency_penalty"}};
  for (auto [check, field] : penalties) {
    EXPECT_FALSE(check(-2)) << field;
    EXPECT_FALSE(check(2)) << field;
    EXPECT_FALSE(check(0)) << field;
    expect_refused(check(-2.0000001), field, "below -2");
    expect_refused(check(2.0000001), field, "above 2");
    expect_refused(check(not_a_number), field, "NaN");
  }
}

TEST(request_fields, repetition_penalty_is_positive_and_finite_as_a_float) {
  EXPECT_FALSE(check_repetition_penalty(1));
  EXPECT_FALSE(check_repetition_penalty(1e-30));
  EXPECT_FALSE(check_repetition_penalty(std::numeric_limits<float>::max()));
  expect_refused(check_repetition_penalty(0), "repetition_penalty", "0");
  expect_refused(check_repetition_penalty(-1), "repetition_penalty", "negative");
  expect_refused(check_repetition_penalty(double(std::numeric_limits<float>::max()) * 2),
                 "repetition_penalty", "past float");
  expect_refused(check_repetition_penalty(inf), "repetition_penalty", "inf");
  expect_refused(check_repetition_penalty(not_a_number), "repetition_penalty", "NaN");
}

TEST(request_fields, min_tokens_lies_in_zero_to_the_limit) {
  EXPECT_FALSE(check_min_tokens(0));
  EXPECT_FALSE(check_min_tokens(max_max_tokens));
  expect_refused(check_min_tokens(-1), "min_tokens", "-1");
  expect_refused(check_min_tokens(int64_t{max_max_tokens} + 1), "min_tokens", "limit + 1");
}

TEST(request_fields, logit_bias_holds_distinct_ids_and_biases_in_range) {
  EXPECT_FALSE(check_logit_bias({}));
  EXPECT_FALSE(check_logit_bias({{0, -100.0f}, {5, 100.0f}}));
  std::vector<logit_bias_entry> full;
  for (int32_t t = 0; t < max_logit_bias; ++t)
    full.push_back({t, 1.0f});
  EXPECT_FALSE(check_logit_bias(full));
  full.push_back({max_logit_bias, 1.0f});
  expect_refused(check_logit_bias(full), "logit_bias", "one entry too many");
  EXPECT_THAT(*check_logit_bias(full), HasSubstr(std::to_string(max_logit_bias)));
  expect_refused(check_logit_bias({{-1, 1.0f}}), "logit_bias", "negative id");
  expect_refused(check_logit_bias({{1, 100.001f}}), "logit_bias", "above 100");
  expect_refused(check_logit_bias({{1, -100.001f}}), "logit_bias", "below -100");
  expect_refused(check_logit_bias({{1, std::nanf("")}}), "logit_bias", "NaN");
  expect_refused(check_logit_bias({{3, 1.0f}, {4, 1.0f}, {3, 2.0f}}), "logit_bias", "twice");
  EXPECT_THAT(*check_logit_bias({{3, 1.0f}, {3, 1.0f}}), HasSubstr("distinct"));
}

TEST(request_fields, stop_token_ids_are_not_negative) {
  EXPECT_FALSE(check_stop_token_ids({}));
  EXPECT_FALSE(check_stop_token_ids({0, 2, 2, int32_t(int32_max)}));
  expect_refused(check_stop_token_ids({3, -1}), "stop_token_ids", "-1");
}

TEST(request_fields, priority_lies_within_its_bound_either_way) {
  EXPECT_FALSE(check_priority(-max_priority));
  EXPECT_FALSE(check_priority(max_priority));
  expect_refused(check_priority(-int64_t{max_priority} - 1), "priority", "below");
  expect_refused(check_priority(int64_t{max_priority} + 1), "priority", "above");
}

TEST(request_fields, stop_strings_are_non_empty_utf8) {
  EXPECT_FALSE(check_stop("x"));
  expect_refused(check_stop(""), "stop", "empty");
  expect_refused(check_stop("\xff"), "stop", "invalid UTF-8");
}

TEST(request_fields, choices_and_logprobs_lie_in_their_ranges) {
  EXPECT_FALSE(check_choices(1));
  EXPECT_FALSE(check_choices(max_choices));
  expect_refused(check_choices(0), "n", "0");
  expect_refused(check_choices(int64_t{max_choices} + 1), "n", "above");
  EXPECT_FALSE(check_logprobs(0));
  EXPECT_FALSE(check_logprobs(max_logprobs));
  expect_refused(check_logprobs(-1), "logprobs", "-1");
  expect_refused(check_logprobs(max_logprobs + 1), "logprobs", "above");
  expect_refused(check_logprobs(21, "top_logprobs"), "top_logprobs", "the chat's name");
}

TEST(request_fields, check_fields_takes_the_defaults_and_finds_the_broken_rule) {
  EXPECT_FALSE(check_fields(generate_request{}));
  generate_request r;
  r.min_p = 2;
  expect_refused(check_fields(r), "min_p", "min_p");
  r = {};
  r.repetition_penalty = 0;
  expect_refused(check_fields(r), "repetition_penalty", "repetition_penalty");
  r = {};
  r.logit_bias = {{1, 200.0f}};
  expect_refused(check_fields(r), "logit_bias", "logit_bias");
  r = {};
  r.stop_token_ids = {-5};
  expect_refused(check_fields(r), "stop_token_ids", "stop_token_ids");
  r = {};
  r.top_k = -1;
  EXPECT_FALSE(check_fields(r));
  r.logprobs = -1; // none
  EXPECT_FALSE(check_fields(r));
  r.logprobs = -2;
  expect_refused(check_fields(r), "logprobs", "-2");
}

TEST(request_fields, min_tokens_may_not_exceed_max_tokens) {
  generate_request r;
  r.max_tokens = 8;
  r.min_tokens = 8;
  EXPECT_FALSE(check_fields(r));
  r.min_tokens = 9;
  expect_refused(check_fields(r), "min_tokens", "9 > 8");
  EXPECT_THAT(*check_fields(r), HasSubstr("max_tokens (8)"));
}

} // namespace
} // namespace kvactor
