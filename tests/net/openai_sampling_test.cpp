// The OpenAI front's sampling fields (presence and frequency penalties and
// logit_bias, vLLM's min_p, repetition_penalty, min_tokens and
// stop_token_ids) on /v1/completions and /v1/chat/completions, and the
// model's generation_config.json defaults for the ones a body leaves out.

#include "net/openai_request.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t drawn = 99;

const model::chat_template plain = model::chat_template::plain();

// Each body's fields on both routes: `fields` follows the prompt or messages.
std::variant<completion_request, api_error> completion(std::string_view fields,
                                                       const model::sampling_defaults& d = {}) {
  return parse_completion_request(R"({"prompt":"a")" + std::string(fields) + "}", drawn, d);
}
std::variant<completion_request, api_error> chat(std::string_view fields,
                                                 const model::sampling_defaults& d = {}) {
  return parse_chat_request(R"({"messages":[{"role":"user","content":"a"}])" +
                              std::string(fields) + "}",
                            drawn, plain, d);
}

using route = std::variant<completion_request, api_error> (*)(std::string_view,
                                                              const model::sampling_defaults&);
constexpr std::pair<const char*, route> routes[] = {{"completions", completion}, {"chat", chat}};

generate_request request_of(route r, std::string_view fields,
                            const model::sampling_defaults& d = {}) {
  auto out = r(fields, d);
  const auto* e = std::get_if<api_error>(&out);
  EXPECT_FALSE(e) << fields << " -> " << (e ? e->message : "");
  if (!std::holds_alternative<completion_request>(out) ||
      std::get<completion_request>(out).prompts.empty())
    return generate_request{};
  return std::get<completion_request>(out).prompts[0];
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

TEST(openai_sampling, reads_every_new_field_on_both_routes) {
  for (const auto& [name, r] : routes) {
    SCOPED_TRACE(name);
    const auto g = request_of(r, R"(,"min_p":0.05,"presence_penalty":0.5,)"
                                 R"("frequency_penalty":-1.5,"repetition_penalty":1.2,)"
                                 R"("logit_bias":{"50256":-100,"7":2.5},"stop_token_ids":[2,13],)"
                                 R"("min_tokens":4,"top_k":20)");
    EXPECT_FLOAT_EQ(g.min_p, 0.05f);
    EXPECT_FLOAT_EQ(g.presence_penalty, 0.5f);
    EXPECT_FLOAT_EQ(g.frequency_penalty, -1.5f);
    EXPECT_FLOAT_EQ(g.repetition_penalty, 1.2f);
    ASSERT_EQ(g.logit_bias.size(), 2u);
    EXPECT_EQ(g.logit_bias[0].token, 50256);
    EXPECT_FLOAT_EQ(g.logit_bias[0].bias, -100.0f);
    EXPECT_EQ(g.logit_bias[1].token, 7);
    EXPECT_EQ(g.stop_token_ids, (std::vector<int32_t>{2, 13}));
    EXPECT_EQ(g.min_tokens, 4);
    EXPECT_EQ(g.top_k, 20);
  }
}

TEST(openai_sampling, every_prompt_of_a_batch_gets_the_fields) {
  auto out = parse_completion_request(
    R"({"prompt":["a","b"],"logit_bias":{"3":1},"stop_token_ids":[9],"presence_penalty":1})",
    drawn);
  ASSERT_TRUE(std::holds_alternative<completion_request>(out));
  for (const auto& g : std::get<completion_request>(out).prompts) {
    ASSERT_EQ(g.logit_bias.size(), 1u);
    EXPECT_EQ(g.logit_bias[0].token, 3);
    EXPECT_EQ(g.stop_token_ids, (std::vector<int32_t>{9}));
    EXPECT_EQ(g.presence_penalty, 1.0f);
  }
}

TEST(openai_sampling, nulls_and_absent_fields_keep_the_defaults) {
  const auto g = request_of(completion, R"(,"min_p":null,"logit_bias":null,)"
                                        R"("presence_penalty":null,"stop_token_ids":null)");
  EXPECT_EQ(g.min_p, 0.0f);
  EXPECT_EQ(g.presence_penalty, 0.0f);
  EXPECT_EQ(g.frequency_penalty, 0.0f);
  EXPECT_EQ(g.repetition_penalty, 1.0f);
  EXPECT_TRUE(g.logit_bias.empty());
  EXPECT_TRUE(g.stop_token_ids.empty());
  EXPECT_EQ(g.min_tokens, 0);
}

TEST(openai_sampling, refuses_bad_values_with_param_naming_the_field) {
  struct case_t {
    const char* fields;
    const char* param;
  };
  const std::string over_limit = logit_bias_of(max_logit_bias + 1);
  const case_t cases[] = {
    {R"(,"min_p":-0.1)", "min_p"},
    {R"(,"min_p":2)", "min_p"},
    {R"(,"min_p":"x")", "min_p"},
    {R"(,"presence_penalty":2.1)", "presence_penalty"},
    {R"(,"presence_penalty":"1")", "presence_penalty"},
    {R"(,"frequency_penalty":-3)", "frequency_penalty"},
    {R"(,"repetition_penalty":0)", "repetition_penalty"},
    {R"(,"repetition_penalty":[1])", "repetition_penalty"},
    {R"(,"min_tokens":-1)", "min_tokens"},
    {R"(,"min_tokens":1048577)", "min_tokens"},
    {R"(,"min_tokens":2.5)", "min_tokens"},
    {R"(,"min_tokens":5,"max_tokens":4)", "min_tokens"},
    {R"(,"top_k":-2)", "top_k"},
    {R"(,"logit_bias":[])", "logit_bias"},
    {R"(,"logit_bias":{"x":1})", "logit_bias"},
    {R"(,"logit_bias":{"1.5":1})", "logit_bias"},
    {R"(,"logit_bias":{"5":true})", "logit_bias"},
    {R"(,"logit_bias":{"-3":1})", "logit_bias"},
    {R"(,"logit_bias":{"5":101})", "logit_bias"},
    {R"(,"logit_bias":{"5":1,"5":-1})", "logit_bias"},
    {over_limit.c_str(), "logit_bias"},
    {R"(,"stop_token_ids":"2")", "stop_token_ids"},
    {R"(,"stop_token_ids":[2.5])", "stop_token_ids"},
    {R"(,"stop_token_ids":[-4])", "stop_token_ids"},
  };
  for (const auto& [name, r] : routes)
    for (const auto& c : cases) {
      auto out = r(c.fields, {});
      ASSERT_TRUE(std::holds_alternative<api_error>(out)) << name << ": " << c.fields;
      const auto& e = std::get<api_error>(out);
      EXPECT_EQ(e.status, 400) << name << ": " << c.fields;
      EXPECT_EQ(e.type, "invalid_request_error");
      EXPECT_EQ(e.param, std::optional<std::string>(c.param))
        << name << ": " << c.fields << " -> " << e.message;
      EXPECT_THAT(e.message, HasSubstr(c.param)) << name << ": " << c.fields;
    }
}

TEST(openai_sampling, min_tokens_is_held_to_each_routes_default_length) {
  // /v1/completions' max_tokens is 16 by default, a chat's 256.
  EXPECT_TRUE(std::holds_alternative<api_error>(completion(R"(,"min_tokens":17)")));
  EXPECT_EQ(request_of(completion, R"(,"min_tokens":16)").min_tokens, 16);
  EXPECT_EQ(request_of(chat, R"(,"min_tokens":17)").min_tokens, 17);
  EXPECT_EQ(request_of(chat, R"(,"min_tokens":20,"max_completion_tokens":20)").min_tokens, 20);
}

TEST(openai_sampling, the_models_defaults_apply_to_omitted_fields_only) {
  model::sampling_defaults d;
  d.temperature = 0.6f;
  d.top_p = 0.95f;
  d.top_k = 20;
  d.min_p = 0.1f;
  d.repetition_penalty = 1.05f;
  for (const auto& [name, r] : routes) {
    SCOPED_TRACE(name);
    const auto omitted = request_of(r, "", d);
    EXPECT_FLOAT_EQ(omitted.temperature, 0.6f);
    EXPECT_FLOAT_EQ(omitted.top_p, 0.95f);
    EXPECT_EQ(omitted.top_k, 20);
    EXPECT_FLOAT_EQ(omitted.min_p, 0.1f);
    EXPECT_FLOAT_EQ(omitted.repetition_penalty, 1.05f);

    const auto sent = request_of(r, R"(,"temperature":1.5,"top_p":1,"top_k":-1,"min_p":0,)"
                                    R"("repetition_penalty":1)",
                                 d);
    EXPECT_EQ(sent.temperature, 1.5f);
    EXPECT_EQ(sent.top_p, 1.0f);
    EXPECT_EQ(sent.top_k, -1);
    EXPECT_EQ(sent.min_p, 0.0f);
    EXPECT_EQ(sent.repetition_penalty, 1.0f);

    // null is as absent: the model's default.
    EXPECT_FLOAT_EQ(request_of(r, R"(,"temperature":null)", d).temperature, 0.6f);
  }
  // Without the file's values, OpenAI's own: temperature 1.
  model::sampling_defaults greedy;
  greedy.temperature = 0.0f;
  EXPECT_EQ(request_of(completion, "", greedy).temperature, 0.0f);
  EXPECT_EQ(request_of(completion, "").temperature, 1.0f);
  EXPECT_EQ(request_of(completion, "", greedy).top_p, 1.0f);
}

} // namespace
} // namespace kvactor::net
