#include "actors/requests/request_fields.hpp"

#include "base/utf8.hpp"

#include <algorithm>
#include <limits>

namespace kvactor {

namespace {

std::string must_be(std::string_view field, std::string_view what) {
  return std::string(field) + " must be " + std::string(what);
}

} // namespace

std::optional<std::string> check_max_tokens(int64_t n) {
  if (n < 1 || n > max_max_tokens)
    return must_be("max_tokens", "an integer in [1, " + std::to_string(max_max_tokens) + "]");
  return std::nullopt;
}

std::optional<std::string> check_temperature(double t) {
  // NOTE: written so that NaN fails too.
  if (!(t >= 0 && t <= max_temperature))
    return must_be("temperature", "a number in [0, " +
                                    std::to_string(static_cast<int64_t>(max_temperature)) + "]");
  return std::nullopt;
}

std::optional<std::string> check_top_k(int64_t k) {
  if (k < -1 || k > std::numeric_limits<int32_t>::max())
    return must_be("top_k", "an integer >= -1 (-1 and 0: all tokens)");
  return std::nullopt;
}

std::optional<std::string> check_top_p(double p) {
  if (!(p > 0 && p <= 1))
    return must_be("top_p", "a number in (0, 1]");
  return std::nullopt;
}

std::optional<std::string> check_min_p(double p) {
  if (!(p >= 0 && p <= 1))
    return must_be("min_p", "a number in [0, 1]");
  return std::nullopt;
}

namespace {

std::optional<std::string> check_penalty(std::string_view field, double p) {
  if (!(p >= -max_abs_penalty && p <= max_abs_penalty))
    return must_be(field, "a number in [-2, 2]");
  return std::nullopt;
}

} // namespace

std::optional<std::string> check_presence_penalty(double p) {
  return check_penalty("presence_penalty", p);
}

std::optional<std::string> check_frequency_penalty(double p) {
  return check_penalty("frequency_penalty", p);
}

std::optional<std::string> check_repetition_penalty(double p) {
  if (!(p > 0 && p <= std::numeric_limits<float>::max()))
    return must_be("repetition_penalty", "a number > 0 (1: off)");
  return std::nullopt;
}

std::optional<std::string> check_min_tokens(int64_t n) {
  if (n < 0 || n > max_max_tokens)
    return must_be("min_tokens", "an integer in [0, " + std::to_string(max_max_tokens) + "]");
  return std::nullopt;
}

std::optional<std::string> check_min_tokens_fit(int64_t min_tokens, int64_t max_tokens) {
  if (min_tokens > max_tokens)
    return must_be("min_tokens", "at most max_tokens (" + std::to_string(max_tokens) + ")");
  return std::nullopt;
}

std::optional<std::string> check_logit_bias(const std::vector<logit_bias_entry>& bias) {
  if (bias.size() > size_t(max_logit_bias))
    return must_be("logit_bias", "at most " + std::to_string(max_logit_bias) + " entries");
  std::vector<int32_t> ids;
  ids.reserve(bias.size());
  for (const logit_bias_entry& e : bias) {
    if (e.token < 0)
      return must_be("logit_bias", "keyed by token ids >= 0");
    if (!(e.bias >= -max_abs_logit_bias && e.bias <= max_abs_logit_bias))
      return must_be("logit_bias", "biases in [-100, 100]");
    ids.push_back(e.token);
  }
  std::ranges::sort(ids);
  if (std::ranges::adjacent_find(ids) != ids.end())
    return must_be("logit_bias", "keyed by distinct token ids");
  return std::nullopt;
}

std::optional<std::string> check_stop_token_ids(const std::vector<int32_t>& ids) {
  for (int32_t t : ids)
    if (t < 0)
      return must_be("stop_token_ids", "token ids >= 0");
  return std::nullopt;
}

std::optional<std::string> check_priority(int64_t p) {
  if (p < -max_priority || p > max_priority)
    return must_be("priority", "an integer in [-" + std::to_string(max_priority) + ", " +
                                 std::to_string(max_priority) + "]");
  return std::nullopt;
}

std::optional<std::string> check_stop(std::string_view s) {
  if (s.empty() || !is_valid_utf8(s))
    return must_be("stop", "non-empty UTF-8 strings");
  return std::nullopt;
}

std::optional<std::string> check_choices(int64_t n) {
  if (n < 1 || n > max_choices)
    return must_be("n", "an integer in [1, " + std::to_string(max_choices) + "]");
  return std::nullopt;
}

std::optional<std::string> check_logprobs(int64_t n, std::string_view field) {
  if (n < 0 || n > max_logprobs)
    return must_be(field, "an integer in [0, " + std::to_string(max_logprobs) + "]");
  return std::nullopt;
}

std::optional<std::string> check_fields(const generate_request& req) {
  if (auto e = check_max_tokens(req.max_tokens))
    return e;
  if (auto e = check_temperature(req.temperature))
    return e;
  if (auto e = check_top_k(req.top_k))
    return e;
  if (auto e = check_top_p(req.top_p))
    return e;
  if (auto e = check_min_p(req.min_p))
    return e;
  if (auto e = check_presence_penalty(req.presence_penalty))
    return e;
  if (auto e = check_frequency_penalty(req.frequency_penalty))
    return e;
  if (auto e = check_repetition_penalty(req.repetition_penalty))
    return e;
  if (auto e = check_logit_bias(req.logit_bias))
    return e;
  if (auto e = check_stop_token_ids(req.stop_token_ids))
    return e;
  if (auto e = check_min_tokens(req.min_tokens))
    return e;
  if (auto e = check_min_tokens_fit(req.min_tokens, req.max_tokens))
    return e;
  if (auto e = check_priority(req.priority))
    return e;
  if (req.logprobs != -1)
    if (auto e = check_logprobs(req.logprobs))
      return *e + " (or -1: none)";
  for (const auto& s : req.stop)
    if (auto e = check_stop(s))
      return e;
  if (auto e = check_choices(req.n))
    return e;
  return std::nullopt;
}

} // namespace kvactor
