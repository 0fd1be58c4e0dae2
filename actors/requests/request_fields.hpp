#pragma once
// request_fields: the runtime's rules for a generate_request's fields, stated
// once. request_state::make checks every request against them; the protocol
// parsers check each field as they read it (after its JSON type), so that a
// refusal names the field in the same words at every front door. Each check
// takes the value as read, wider than the field's type, so a value that
// would not fit is out of range too; it answers what is wrong, naming the
// field, or nullopt.

#include "kvactor/kvactor.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor {

std::optional<std::string> check_max_tokens(int64_t n);   // [1, max_max_tokens]
std::optional<std::string> check_temperature(double t);   // [0, max_temperature]
std::optional<std::string> check_top_k(int64_t k);        // [-1, 2^31); -1 and 0: all
std::optional<std::string> check_top_p(double p);         // (0, 1]
std::optional<std::string> check_min_p(double p);         // [0, 1]
std::optional<std::string> check_presence_penalty(double p);  // [-2, 2]
std::optional<std::string> check_frequency_penalty(double p); // [-2, 2]
std::optional<std::string> check_repetition_penalty(double p); // finite, > 0
std::optional<std::string> check_min_tokens(int64_t n);   // [0, max_max_tokens]
// The one rule between two fields, for a parser once both are read.
std::optional<std::string> check_min_tokens_fit(int64_t min_tokens, int64_t max_tokens);
// At most max_logit_bias entries, distinct ids >= 0, each bias in
// [-max_abs_logit_bias, max_abs_logit_bias] (the vocabulary is
// request_state's to check).
std::optional<std::string> check_logit_bias(const std::vector<logit_bias_entry>& bias);
std::optional<std::string> check_stop_token_ids(const std::vector<int32_t>& ids); // ids >= 0
std::optional<std::string> check_priority(int64_t p);     // [-max_priority, max_priority]
std::optional<std::string> check_stop(std::string_view s); // non-empty UTF-8
std::optional<std::string> check_choices(int64_t n);       // [1, max_choices]
// [0, max_logprobs]; `field` for the chat API's top_logprobs.
std::optional<std::string> check_logprobs(int64_t n, std::string_view field = "logprobs");

// The first rule `req` breaks (logprobs -1 is none; min_tokens also must
// not exceed max_tokens), or nullopt. The prompt and the token ids' place
// in the vocabulary are request_state's to check: they need the model.
std::optional<std::string> check_fields(const generate_request& req);

// The numeric fields a front door reads as they are, by their rule alone:
// the name the line protocol gives them (and OpenAI's API, for those it
// takes by the same rule), the rule, and the field of generate_request.
struct integer_field {
  std::string_view key;
  std::optional<std::string> (*check)(int64_t);
  int32_t generate_request::*member;
};
struct number_field {
  std::string_view key;
  std::optional<std::string> (*check)(double);
  float generate_request::*member;
};
inline constexpr integer_field max_tokens_field{"max_tokens", check_max_tokens,
                                                &generate_request::max_tokens};
inline constexpr integer_field top_k_field{"top_k", check_top_k, &generate_request::top_k};
inline constexpr integer_field priority_field{"priority", check_priority,
                                              &generate_request::priority};
inline constexpr integer_field logprobs_field{
  "logprobs", [](int64_t n) { return check_logprobs(n); }, &generate_request::logprobs};
inline constexpr integer_field choices_field{"n", check_choices, &generate_request::n};
inline constexpr number_field temperature_field{"temperature", check_temperature,
                                                &generate_request::temperature};
inline constexpr number_field top_p_field{"top_p", check_top_p, &generate_request::top_p};
inline constexpr number_field min_p_field{"min_p", check_min_p, &generate_request::min_p};
inline constexpr number_field presence_penalty_field{"presence_penalty", check_presence_penalty,
                                                     &generate_request::presence_penalty};
inline constexpr number_field frequency_penalty_field{
  "frequency_penalty", check_frequency_penalty, &generate_request::frequency_penalty};
inline constexpr number_field repetition_penalty_field{
  "repetition_penalty", check_repetition_penalty, &generate_request::repetition_penalty};
inline constexpr integer_field min_tokens_field{"min_tokens", check_min_tokens,
                                                &generate_request::min_tokens};

} // namespace kvactor
