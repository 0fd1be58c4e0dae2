#include "net/openai_request.hpp"

#include "tests/model/chatml_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t drawn = 4242;

completion_request parsed(std::string_view body) {
  auto r = parse_completion_request(body, drawn);
  EXPECT_TRUE(std::holds_alternative<completion_request>(r))
    << body << " -> "
    << (std::holds_alternative<api_error>(r) ? std::get<api_error>(r).message : "");
  return std::holds_alternative<completion_request>(r) ? std::get<completion_request>(r)
                                                       : completion_request{};
}

api_error refused(std::string_view body) {
  auto r = parse_completion_request(body, drawn);
  EXPECT_TRUE(std::holds_alternative<api_error>(r)) << body;
  return std::holds_alternative<api_error>(r) ? std::get<api_error>(r) : api_error{0, ""};
}

TEST(openai_request, reads_every_sampling_field) {
  auto c =
    parsed(R"({"model":"m","prompt":"Hi","max_tokens":7,"temperature":0.5,"top_p":0.9,)"
           R"("top_k":5,"seed":11,"stop":["\n","END"],"stream":true,)"
           R"("stream_options":{"include_usage":true},"ignore_eos":true,"priority":3,"user":"u"})");
  EXPECT_EQ(c.model, "m");
  ASSERT_EQ(c.prompts.size(), 1u);
  const auto& r = c.prompts[0];
  EXPECT_EQ(r.prompt, "Hi");
  EXPECT_TRUE(r.prompt_tokens.empty());
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.top_p, 0.9f);
  EXPECT_EQ(r.top_k, 5);
  EXPECT_EQ(r.seed, 11u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.priority, 3);
  EXPECT_TRUE(c.stream);
  EXPECT_TRUE(c.include_usage);
  EXPECT_FALSE(c.return_token_ids);
  EXPECT_TRUE(parsed(R"({"prompt":"Hi","return_token_ids":true})").return_token_ids);
}

TEST(openai_request, defaults_as_openai_and_a_drawn_seed) {
  auto c = parsed(R"({"prompt":"Hi"})");
  ASSERT_EQ(c.prompts.size(), 1u);
  EXPECT_FALSE(c.model.has_value());
  EXPECT_EQ(c.prompts[0].max_tokens, 16);
  EXPECT_FLOAT_EQ(c.prompts[0].temperature, 1.0f);
  EXPECT_EQ(c.prompts[0].top_k, 0);
  EXPECT_EQ(c.prompts[0].seed, drawn);
  EXPECT_FALSE(c.stream);
  // Nulls are as absent, as clients send them for unset fields.
  auto n = parsed(
    R"({"prompt":"Hi","max_tokens":null,"stop":null,"seed":null,"logprobs":null,"top_k":-1})");
  EXPECT_EQ(n.prompts[0].max_tokens, 16);
  EXPECT_EQ(n.prompts[0].seed, drawn);
  EXPECT_EQ(n.prompts[0].top_k, -1); // vLLM's word for all tokens, as the runtime's 0
}

TEST(openai_request, reads_each_prompt_form) {
  auto tokens = parsed(R"({"prompt":[1,2,3]})");
  ASSERT_EQ(tokens.prompts.size(), 1u);
  EXPECT_EQ(tokens.prompts[0].prompt_tokens, (std::vector<int32_t>{1, 2, 3}));

  auto texts = parsed(R"({"prompt":["a","b"],"max_tokens":3})");
  ASSERT_EQ(texts.prompts.size(), 2u);
  EXPECT_EQ(texts.prompts[1].prompt, "b");
  EXPECT_EQ(texts.prompts[1].max_tokens, 3);

  auto lists = parsed(R"({"prompt":[[1],[2,3]],"stop":"x"})");
  ASSERT_EQ(lists.prompts.size(), 2u);
  EXPECT_EQ(lists.prompts[1].prompt_tokens, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(lists.prompts[0].stop, (std::vector<std::string>{"x"}));
}

TEST(openai_request, names_the_field_at_fault) {
  struct bad {
    const char* body;
    const char* param;
  };
  for (const auto& b :
       {bad{R"({"prompt":"a","top_p":0})", "top_p"},
        bad{R"({"prompt":"a","temperature":3})", "temperature"},
        bad{R"({"prompt":"a","max_tokens":0})", "max_tokens"},
        bad{R"({"prompt":"a","max_tokens":"8"})", "max_tokens"},
        bad{R"({"prompt":"a","top_k":-2})", "top_k"},
        bad{R"({"prompt":"a","stop":[""]})", "stop"},
        bad{R"({"prompt":"a","stop":7})", "stop"},
        bad{R"({"prompt":"a","stop":""})", "stop"},
        bad{R"({"prompt":"a","max_tokens":1048577})", "max_tokens"},
        bad{R"({"prompt":"a","top_k":4294967296})", "top_k"},
        bad{R"({"prompt":"a","top_p":1.5})", "top_p"},
        bad{R"({"prompt":"a","priority":-1000001})", "priority"},
        bad{R"({"prompt":"a","priority":1.5})", "priority"},
        bad{R"({"prompt":"a","stream":"yes"})", "stream"},
        bad{R"({"prompt":"a","n":0})", "n"},
        bad{R"({"prompt":"a","n":129})", "n"},
        bad{R"({"prompt":"a","n":1.5})", "n"},
        bad{R"({"prompt":"a","model":1})", "model"},
        bad{R"({"prompt":[]})", "prompt"},
        bad{R"({"prompt":""})", "prompt"},
        bad{R"({"prompt":["a",""]})", "prompt"},
        bad{R"({"prompt":[1,"a"]})", "prompt"},
        bad{R"({"prompt":["a",1]})", "prompt"},
        bad{R"({"prompt":[[]]})", "prompt"},
        bad{R"({"prompt":[-1]})", "prompt"},
        bad{R"({"prompt":{}})", "prompt"},
        bad{R"({"max_tokens":4})", "prompt"},
        bad{R"({"prompt":"a","stream_options":{"include_usage":true}})", "stream_options"}}) {
    const api_error e = refused(b.body);
    EXPECT_EQ(e.status, 400) << b.body;
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.param, std::optional<std::string>(b.param)) << b.body << " -> " << e.message;
    EXPECT_THAT(e.message, HasSubstr(b.param)) << b.body;
  }
}

TEST(openai_request, refuses_what_it_does_not_support_rather_than_ignoring_it) {
  for (const char* field : {R"("best_of":3)", R"("echo":true)", R"("suffix":"x")"}) {
    const api_error e = refused(std::string(R"({"prompt":"a",)") + field + "}");
    EXPECT_EQ(e.status, 400) << field;
    EXPECT_THAT(e.message, HasSubstr("not supported")) << field;
    EXPECT_TRUE(e.param.has_value()) << field;
  }
  // Their neutral values are fine.
  parsed(R"({"prompt":"a","best_of":1,"echo":false})");
}

TEST(openai_request, asks_every_prompt_for_n_choices) {
  const auto r = parsed(R"({"prompt":["a","b"],"n":3})");
  ASSERT_EQ(r.prompts.size(), 2u);
  for (const auto& p : r.prompts)
    EXPECT_EQ(p.n, 3);
  EXPECT_EQ(parsed(R"({"prompt":"a"})").prompts[0].n, 1);
}

TEST(openai_request, asks_a_chat_for_n_choices) {
  auto r = parse_chat_request(R"({"messages":[{"role":"user","content":"Hi"}],"n":4})", 1,
                              model::chat_template::plain());
  ASSERT_TRUE(std::holds_alternative<completion_request>(r));
  EXPECT_EQ(std::get<completion_request>(r).prompts.at(0).n, 4);
}

TEST(openai_request, reads_logprobs_up_to_twenty) {
  EXPECT_EQ(parsed(R"({"prompt":"a"})").prompts[0].logprobs, -1);
  EXPECT_EQ(parsed(R"({"prompt":"a","logprobs":null})").prompts[0].logprobs, -1);
  EXPECT_EQ(parsed(R"({"prompt":["a","b"],"logprobs":0})").prompts[1].logprobs, 0);
  EXPECT_EQ(parsed(R"({"prompt":"a","logprobs":20})").prompts[0].logprobs, 20);
  for (const char* bad : {R"({"prompt":"a","logprobs":21})", R"({"prompt":"a","logprobs":-1})",
                          R"({"prompt":"a","logprobs":true})"})
    EXPECT_EQ(refused(bad).param, std::optional<std::string>("logprobs")) << bad;
}

TEST(openai_request, refuses_bodies_that_are_not_one_json_object) {
  for (const char* body : {"", "[1]", "{\"prompt\":", "{\"prompt\":\"a\"} x", "nul"}) {
    const api_error e = refused(body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_FALSE(e.param.has_value()) << body;
  }
}

TEST(openai_request, formats_errors_in_openai_shape) {
  EXPECT_EQ(format_api_error({400, "top_p must be \"x\"", "invalid_request_error", "top_p"}),
            R"({"error":{"message":"top_p must be \"x\"","type":"invalid_request_error",)"
            R"("param":"top_p","code":null}})");
}

TEST(openai_request, maps_refused_admissions_and_finish_reasons) {
  const api_error full =
    admission_error({0, 5, errc::overloaded, "the waiting queue is full (4)"}, std::nullopt);
  EXPECT_EQ(full.status, 429);
  const api_error lng = admission_error({0, 5, errc::prompt_too_long, "too long"}, 1);
  EXPECT_EQ(lng.status, 400);
  EXPECT_EQ(lng.code, "context_length_exceeded");
  EXPECT_EQ(lng.message, "prompt 1: too long");
  EXPECT_EQ(openai_finish_reason(finish_reason::max_tokens), "length");
  EXPECT_EQ(openai_finish_reason(finish_reason::eos), "stop");
  EXPECT_EQ(openai_finish_reason(finish_reason::stop), "stop");
  EXPECT_EQ(openai_finish_reason(finish_reason::aborted), "abort");
  EXPECT_EQ(openai_finish_reason(finish_reason::error), "error");
  // and back, as the load drivers read answers
  EXPECT_EQ(finish_reason_of_openai("stop"), finish_reason::stop);
  EXPECT_EQ(finish_reason_of_openai("tool_calls"), finish_reason::stop);
  EXPECT_EQ(finish_reason_of_openai("length"), finish_reason::max_tokens);
  EXPECT_EQ(finish_reason_of_openai("abort"), finish_reason::aborted);
  EXPECT_EQ(finish_reason_of_openai("error"), finish_reason::error);
  EXPECT_EQ(finish_reason_of_openai("content_filter"), finish_reason::error);
  const api_error lost =
    admission_error({0, 0, errc::worker_lost, "worker h:1 was lost"}, std::nullopt);
  EXPECT_EQ(lost.status, 503);
  EXPECT_EQ(lost.code, "worker_lost");
  const api_error failed = admission_error(
    {0, 0, errc::device_unusable, "the device failed: cudaErrorIllegalAddress"}, std::nullopt);
  EXPECT_EQ(failed.status, 503);
  EXPECT_EQ(failed.type, "server_error");
  EXPECT_EQ(failed.code, "device_unusable");
}

const model::chat_template& chatml = test_support::chatml_template();

completion_request chat_parsed(std::string_view body, const model::chat_template& t = chatml) {
  auto r = parse_chat_request(body, drawn, t);
  EXPECT_TRUE(std::holds_alternative<completion_request>(r))
    << body << " -> "
    << (std::holds_alternative<api_error>(r) ? std::get<api_error>(r).message : "");
  return std::holds_alternative<completion_request>(r) ? std::get<completion_request>(r)
                                                       : completion_request{};
}

api_error chat_refused(std::string_view body, const model::chat_template& t = chatml) {
  auto r = parse_chat_request(body, drawn, t);
  EXPECT_TRUE(std::holds_alternative<api_error>(r)) << body;
  return std::holds_alternative<api_error>(r) ? std::get<api_error>(r) : api_error{0, ""};
}

TEST(openai_chat_request, renders_the_messages_and_stops_at_the_end_of_turn) {
  auto c = chat_parsed(
    R"({"model":"m","messages":[{"role":"system","content":"S"},)"
    R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],)"
    R"("max_completion_tokens":9,"stop":"END","stream":true})");
  ASSERT_EQ(c.prompts.size(), 1u);
  EXPECT_EQ(
    c.prompts[0].prompt,
    "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\na\nb<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(c.prompts[0].max_tokens, 9);
  EXPECT_EQ(c.prompts[0].stop, (std::vector<std::string>{"END", "<|im_end|>"}));
  EXPECT_TRUE(c.stream);
  // No template: plain, and no end-of-turn stop.
  auto plain = chat_parsed(R"({"messages":[{"role":"user","content":"hi"}]})",
                           model::chat_template::plain());
  EXPECT_EQ(plain.prompts[0].prompt, "user: hi\nassistant:");
  EXPECT_TRUE(plain.prompts[0].stop.empty());
  EXPECT_EQ(plain.prompts[0].max_tokens, default_chat_max_tokens);
}

// "developer" is OpenAI's newer name for "system".
// A text prompt gets the tokenizer's BOS, a rendered chat not (its template
// wrote it); either can be told otherwise, as vLLM.
TEST(openai_chat_request, adds_special_tokens_to_text_prompts_and_not_to_chats) {
  EXPECT_TRUE(parsed(R"({"prompt":"Hi"})").prompts[0].add_special_tokens);
  EXPECT_FALSE(
    parsed(R"({"prompt":"Hi","add_special_tokens":false})").prompts[0].add_special_tokens);
  EXPECT_FALSE(chat_parsed(R"({"messages":[{"role":"user","content":"hi"}]})")
                 .prompts[0]
                 .add_special_tokens);
  EXPECT_TRUE(chat_parsed(R"({"messages":[{"role":"user","content":"hi"}],)"
                          R"("add_special_tokens":true})")
                .prompts[0]
                .add_special_tokens);
  EXPECT_EQ(refused(R"({"prompt":"Hi","add_special_tokens":1})").param, "add_special_tokens");
}

TEST(openai_chat_request, renders_a_developer_message_as_the_system_message) {
  auto c = chat_parsed(R"({"messages":[{"role":"developer","content":"S"},)"
                       R"({"role":"user","content":"hi"}]})");
  auto s = chat_parsed(R"({"messages":[{"role":"system","content":"S"},)"
                       R"({"role":"user","content":"hi"}]})");
  ASSERT_EQ(c.prompts.size(), 1u);
  EXPECT_EQ(c.prompts[0].prompt, s.prompts[0].prompt);
  EXPECT_THAT(c.prompts[0].prompt, HasSubstr("<|im_start|>system\nS<|im_end|>"));
}

// A chat's logprobs: true asks for each token's, top_logprobs for that many
// alternatives (which needs logprobs true, as OpenAI has it).
TEST(openai_chat_request, reads_logprobs_and_top_logprobs) {
  const std::string m = R"({"messages":[{"role":"user","content":"x"}])";
  EXPECT_EQ(chat_parsed(m + "}").prompts[0].logprobs, -1);
  EXPECT_EQ(chat_parsed(m + R"(,"logprobs":false,"top_logprobs":0})").prompts[0].logprobs, -1);
  EXPECT_EQ(chat_parsed(m + R"(,"logprobs":true})").prompts[0].logprobs, 0);
  EXPECT_EQ(chat_parsed(m + R"(,"top_logprobs":5,"logprobs":true})").prompts[0].logprobs, 5);
  EXPECT_EQ(chat_refused(m + R"(,"top_logprobs":2})").param,
            std::optional<std::string>("top_logprobs"));
  EXPECT_EQ(chat_refused(m + R"(,"logprobs":true,"top_logprobs":21})").param,
            std::optional<std::string>("top_logprobs"));
}

TEST(openai_chat_request, passes_chat_template_kwargs_to_the_template) {
  auto c = chat_parsed(R"({"messages":[{"role":"user","content":"q"}],)"
                       R"("chat_template_kwargs":{"enable_thinking":false}})");
  EXPECT_EQ(c.prompts[0].prompt,
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(chat_refused(R"({"messages":[{"role":"user","content":"q"}],)"
                         R"("chat_template_kwargs":[true]})")
              .param,
            std::optional<std::string>("chat_template_kwargs"));
}

TEST(openai_chat_request, names_the_message_or_field_at_fault) {
  struct bad {
    const char* body;
    const char* param;
  };
  for (
    const auto& b :
    {bad{R"({"prompt":"a"})", "messages"}, bad{R"({"messages":[]})", "messages"},
     bad{R"({"messages":"hi"})", "messages"},
     bad{R"({"messages":[{"content":"x"}]})", "messages[0].role"},
     bad{R"({"messages":[{"role":"user","content":7}]})", "messages[0].content"},
     bad{R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
         "messages[0].content"},
     bad{R"({"messages":[{"role":"tool","content":"x"}]})", "messages"},
     bad{R"({"messages":[{"role":"user","content":"x"}],"logprobs":1})", "logprobs"},
     bad{R"({"messages":[{"role":"user","content":"x"}],"tools":[{}]})", "tools"},
     bad{R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}})",
         "response_format"}}) {
    const api_error e = chat_refused(b.body);
    EXPECT_EQ(e.status, 400) << b.body;
    EXPECT_EQ(e.param, std::optional<std::string>(b.param)) << b.body << " -> " << e.message;
  }
  // The template's own refusal.
  EXPECT_THAT(chat_refused(R"({"messages":[{"role":"tool","content":"x"}]})").message,
              HasSubstr("unknown role tool"));
}

} // namespace
} // namespace kvactor::net
