// The line protocol's sampling fields (min_p, the penalties, logit_bias,
// stop_token_ids, min_tokens, top_k -1) and the model's
// generation_config.json defaults for the ones a line leaves out.

#include "net/line_protocol.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

client_message parse(std::string_view fields, model::sampling_defaults defaults = {}) {
  line_parser p(defaults);
  return p.parse(R"({"op":"generate","id":"r1","prompt":"a")" + std::string(fields) + "}");
}

generate_request request_of(std::string_view fields, model::sampling_defaults defaults = {}) {
  auto m = parse(fields, defaults);
  EXPECT_TRUE(std::holds_alternative<generate_op>(m))
    << fields << " -> "
    << (std::holds_alternative<protocol_error>(m) ? std::get<protocol_error>(m).message : "");
  return std::holds_alternative<generate_op>(m) ? std::get<generate_op>(m).request
                                                : generate_request{};
}

protocol_error error_of(std::string_view fields) {
  auto m = parse(fields);
  EXPECT_TRUE(std::holds_alternative<protocol_error>(m)) << fields;
  return std::holds_alternative<protocol_error>(m) ? std::get<protocol_error>(m)
                                                   : protocol_error{};
}

// A logit_bias of n entries, ids 0 to n-1, as a field after others.
std::string logit_bias_of(int n) {
  std::string s = R"(,"logit_bias":{)";
  for (int i = 0; i < n; ++i) {
    if (i > 0)
      s += ',';
    s += '"';
    s += std::to_string(i);
    s += "\":1";
  }
  s += '}';
  return s;
}

TEST(line_protocol_sampling, reads_every_new_field) {
  const auto r = request_of(R"(,"min_p":0.05,"presence_penalty":0.5,"frequency_penalty":-1.5,)"
                            R"("repetition_penalty":1.2,"logit_bias":{"50256":-100,"7":2.5},)"
                            R"("stop_token_ids":[2,13],"min_tokens":4,"top_k":-1)");
  EXPECT_FLOAT_EQ(r.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.frequency_penalty, -1.5f);
  EXPECT_FLOAT_EQ(r.repetition_penalty, 1.2f);
  ASSERT_EQ(r.logit_bias.size(), 2u);
  EXPECT_EQ(r.logit_bias[0].token, 50256);
  EXPECT_FLOAT_EQ(r.logit_bias[0].bias, -100.0f);
  EXPECT_EQ(r.logit_bias[1].token, 7);
  EXPECT_FLOAT_EQ(r.logit_bias[1].bias, 2.5f);
  EXPECT_EQ(r.stop_token_ids, (std::vector<int32_t>{2, 13}));
  EXPECT_EQ(r.min_tokens, 4);
  EXPECT_EQ(r.top_k, -1);
}

TEST(line_protocol_sampling, leaves_the_new_fields_at_their_defaults_when_absent) {
  const auto r = request_of("");
  const generate_request defaults;
  EXPECT_EQ(r.min_p, defaults.min_p);
  EXPECT_EQ(r.presence_penalty, 0.0f);
  EXPECT_EQ(r.frequency_penalty, 0.0f);
  EXPECT_EQ(r.repetition_penalty, 1.0f);
  EXPECT_TRUE(r.logit_bias.empty());
  EXPECT_TRUE(r.stop_token_ids.empty());
  EXPECT_EQ(r.min_tokens, 0);
  EXPECT_TRUE(request_of(R"(,"logit_bias":{},"stop_token_ids":[])").logit_bias.empty());
}

TEST(line_protocol_sampling, takes_values_at_the_bounds) {
  const auto r = request_of(R"(,"min_p":1,"presence_penalty":-2,"frequency_penalty":2,)"
                            R"("logit_bias":{"0":100,"1":-100},"min_tokens":64,"max_tokens":64)");
  EXPECT_EQ(r.min_p, 1.0f);
  EXPECT_EQ(r.presence_penalty, -2.0f);
  EXPECT_EQ(r.frequency_penalty, 2.0f);
  EXPECT_EQ(r.min_tokens, 64);
  EXPECT_EQ(request_of(R"(,"min_p":0)").min_p, 0.0f);
}

TEST(line_protocol_sampling, refuses_bad_values_naming_the_field) {
  struct case_t {
    const char* fields;
    const char* mentions;
  };
  const std::string over_limit = logit_bias_of(max_logit_bias + 1);
  const case_t cases[] = {
    {R"(,"min_p":-0.1)", "min_p must be"},
    {R"(,"min_p":1.01)", "min_p must be"},
    {R"(,"min_p":"0.1")", "min_p must be a number"},
    {R"(,"presence_penalty":2.5)", "presence_penalty must be"},
    {R"(,"presence_penalty":true)", "presence_penalty must be a number"},
    {R"(,"frequency_penalty":-2.01)", "frequency_penalty must be"},
    {R"(,"repetition_penalty":0)", "repetition_penalty must be"},
    {R"(,"repetition_penalty":-1)", "repetition_penalty must be"},
    {R"(,"repetition_penalty":1e39)", "repetition_penalty must be"},
    {R"(,"min_tokens":-1)", "min_tokens must be"},
    {R"(,"min_tokens":1.5)", "min_tokens must be an integer"},
    {R"(,"min_tokens":65)", "min_tokens must be at most max_tokens"},
    {R"(,"min_tokens":9,"max_tokens":8)", "min_tokens must be at most max_tokens (8)"},
    {R"(,"top_k":-2)", "top_k must be"},
    {R"(,"logit_bias":[1,2])", "logit_bias must be an object"},
    {R"(,"logit_bias":{"abc":1})", "logit_bias must be"},
    {R"(,"logit_bias":{"5x":1})", "logit_bias must be"},
    {R"(,"logit_bias":{"":1})", "logit_bias must be"},
    {R"(,"logit_bias":{"99999999999":1})", "logit_bias must be"},
    {R"(,"logit_bias":{"5":"1"})", "logit_bias must be"},
    {R"(,"logit_bias":{"-1":1})", "logit_bias must be keyed by token ids >= 0"},
    {R"(,"logit_bias":{"5":100.5})", "logit_bias must be"},
    {R"(,"logit_bias":{"5":-1e300})", "logit_bias must be"},
    {R"(,"logit_bias":{"5":1,"5":2})", "distinct"},
    {over_limit.c_str(), "at most 300"},
    {R"(,"stop_token_ids":5)", "stop_token_ids must be an array"},
    {R"(,"stop_token_ids":[1,"2"])", "stop_token_ids must be"},
    {R"(,"stop_token_ids":[4294967296])", "stop_token_ids must be"},
    {R"(,"stop_token_ids":[-1])", "stop_token_ids must be token ids >= 0"},
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.fields);
    EXPECT_EQ(e.code, "invalid_field") << c.fields;
    EXPECT_EQ(e.id, std::optional<std::string>("r1")) << c.fields;
    EXPECT_THAT(e.message, HasSubstr(c.mentions)) << c.fields;
  }
  // Exactly 300 entries is the limit, not past it.
  EXPECT_EQ(request_of(logit_bias_of(max_logit_bias)).logit_bias.size(), 300u);
}

TEST(line_protocol_sampling, the_models_defaults_apply_to_omitted_fields_only) {
  model::sampling_defaults d;
  d.temperature = 0.6f;
  d.top_p = 0.95f;
  d.top_k = 20;
  d.min_p = 0.1f;
  d.repetition_penalty = 1.05f;
  const auto omitted = request_of("", d);
  EXPECT_FLOAT_EQ(omitted.temperature, 0.6f);
  EXPECT_FLOAT_EQ(omitted.top_p, 0.95f);
  EXPECT_EQ(omitted.top_k, 20);
  EXPECT_FLOAT_EQ(omitted.min_p, 0.1f);
  EXPECT_FLOAT_EQ(omitted.repetition_penalty, 1.05f);

  const auto sent = request_of(R"(,"temperature":0,"top_p":1,"top_k":0,"min_p":0,)"
                               R"("repetition_penalty":1)",
                               d);
  EXPECT_EQ(sent.temperature, 0.0f);
  EXPECT_EQ(sent.top_p, 1.0f);
  EXPECT_EQ(sent.top_k, 0);
  EXPECT_EQ(sent.min_p, 0.0f);
  EXPECT_EQ(sent.repetition_penalty, 1.0f);

  // Only what the file sets: the protocol's own defaults for the rest.
  model::sampling_defaults top_p_only;
  top_p_only.top_p = 0.5f;
  const auto partial = request_of(R"(,"top_k":3)", top_p_only);
  EXPECT_FLOAT_EQ(partial.top_p, 0.5f);
  EXPECT_EQ(partial.top_k, 3);
  EXPECT_EQ(partial.temperature, 0.0f);
  EXPECT_EQ(partial.repetition_penalty, 1.0f);
}

} // namespace
} // namespace kvactor::net
