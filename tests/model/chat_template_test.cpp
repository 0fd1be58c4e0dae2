#include "model/chat_template.hpp"

#include "temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

// Template texts as tokenizer_config.json holds them once its JSON string is
// decoded (Jinja's own escapes, like '\n', stay as written). Only the
// markers matter to detection; these are abridged from the families'
// published templates.
const std::string llama3 =
  R"({% for message in messages %}{% set content = '<|start_header_id|>' + message['role'] + )"
  R"('<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{{ content }}{% endfor %})";
const std::string llama31 =
  R"({{- bos_token }}{%- if not date_string is defined %}{%- set date_string = "26 Jul 2024" %})"
  R"({%- endif %}{{- "Cutting Knowledge Date: December 2023\n" }}<|start_header_id|><|eot_id|>)";
const std::string llama32 = llama31 + R"({%- set date_string = strftime_now("%d %b %Y") %})";
const std::string qwen25 =
  R"({%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\n' + messages[0]['content'] )"
  R"(+ '<|im_end|>\n' }}{%- else %}{{- '<|im_start|>system\nYou are Qwen, created by Alibaba )"
  R"(Cloud. You are a helpful assistant.<|im_end|>\n' }}{%- endif %})";
const std::string qwen3 =
  R"({%- if messages[0].role == 'system' %}{{- '<|im_start|>system\n' + messages[0].content + )"
  R"('<|im_end|>\n' }}{%- endif %}{%- if '</think>' in content %}<think>{%- endif %})";

std::string render(const chat_template& t, const std::vector<chat_message>& m,
                   chat_options o = {}) {
  auto r = t.render(m, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : "";
}

const std::vector<chat_message> conversation = {
  {"system", "You are terse."}, {"user", " Hi \n"}, {"assistant", "Hello!"}, {"user", "Bye"}};

TEST(chat_template, detects_each_family_by_its_markers) {
  EXPECT_EQ(chat_template::detect(std::nullopt).format(), chat_format::plain);
  EXPECT_EQ(chat_template::detect(llama3).format(), chat_format::llama3);
  EXPECT_EQ(chat_template::detect(llama31).format(), chat_format::llama31);
  EXPECT_EQ(chat_template::detect(qwen25).format(), chat_format::chatml);
  EXPECT_EQ(chat_template::detect(qwen3).format(), chat_format::qwen3);
  EXPECT_EQ(chat_template::detect("{{ messages[0]['content'] }}[/INST]").format(),
            chat_format::unsupported);
}

TEST(chat_template, renders_llama3) {
  const auto t = chat_template::detect(llama3, "<|begin_of_text|>");
  EXPECT_EQ(
    render(t, conversation),
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(t.end_of_turn(), "<|eot_id|>");
}

// Jinja's trim is Python's str.strip(): no-break, ideographic and other
// Unicode spaces and U+001C..U+001F go too. The expected text is Jinja2
// 3.1.2's rendering of Llama 3's published template.
TEST(chat_template, trims_as_python_does) {
  const auto t = chat_template::detect(llama3, "<|begin_of_text|>");
  EXPECT_EQ(render(t, {{"system", "\u00a0S\u3000"}, {"user", "\u00a0Hi\u001c \u0085"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // Not a space to Python: zero-width space, and bytes that are no character.
  EXPECT_THAT(render(t, {{"user", "\u200bHi\xff"}}), HasSubstr("\n\n\u200bHi\xff<|eot_id|>"));
}

TEST(chat_template, renders_llama31_with_its_system_header_and_date) {
  const auto t = chat_template::detect(llama31, "<|begin_of_text|>");
  const std::string user_and_prompt =
    "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n";
  EXPECT_EQ(render(t, {{"user", "Hi"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>" +
              user_and_prompt);
  chat_options o;
  o.today = "25 Nov 2026";
  // The template's fixed date unless it asks for today's (Llama 3.2's strftime_now).
  EXPECT_THAT(render(t, {{"user", "Hi"}}, o), HasSubstr("Today Date: 26 Jul 2024\n"));
  EXPECT_EQ(
    render(chat_template::detect(llama32, "<|begin_of_text|>"),
           {{"system", " Be brief. "}, {"user", "Hi"}}, o),
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
    "Cutting Knowledge Date: December 2023\nToday Date: 25 Nov 2026\n\nBe brief.<|eot_id|>" +
      user_and_prompt);
}

TEST(chat_template, renders_chatml_with_the_templates_default_system_message) {
  const auto t = chat_template::detect(qwen25);
  EXPECT_EQ(render(t, {{"user", "Hi"}}),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render(t, conversation),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n Hi \n<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(t.end_of_turn(), "<|im_end|>");
}

TEST(chat_template, renders_qwen3_dropping_earlier_reasoning) {
  const auto t = chat_template::detect(qwen3);
  const std::vector<chat_message> m = {{"system", "S"},
                                       {"user", "Q1"},
                                       {"assistant", "<think>\nworking\n</think>\n\nA1"},
                                       {"user", "Q2"}};
  const std::string history =
    "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ1<|im_end|>\n"
    "<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nQ2<|im_end|>\n";
  EXPECT_EQ(render(t, m), history + "<|im_start|>assistant\n");
  chat_options no_thinking;
  no_thinking.enable_thinking = false;
  EXPECT_EQ(render(t, m, no_thinking), history + "<|im_start|>assistant\n<think>\n\n</think>\n\n");
  // An answer after the last question keeps its reasoning (a continued turn).
  EXPECT_EQ(render(t, {{"user", "Q"}, {"assistant", "<think>\nr\n</think>\nA"}}),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\nA"
            "<|im_end|>\n<|im_start|>assistant\n");
}

// A user message that is a whole <tool_response> is not a query: the answer
// before it keeps its reasoning (Jinja2 3.1.2's rendering of Qwen3's
// published template).
TEST(chat_template, qwen3_keeps_reasoning_before_a_tool_response) {
  const auto t = chat_template::detect(qwen3);
  EXPECT_EQ(render(t, {{"user", "Q1"},
                       {"assistant", "<think>\nr1\n</think>\n\nA1"},
                       {"user", "<tool_response>\n42\n</tool_response>"}}),
            "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\n<think>\nr1\n</think>\n\nA1"
            "<|im_end|>\n<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(chat_template, renders_plain_without_a_template) {
  EXPECT_EQ(render(chat_template::detect(std::nullopt), {{"system", "S"}, {"user", "Hi"}}),
            "system: S\nuser: Hi\nassistant:");
  EXPECT_EQ(chat_template::detect(std::nullopt).end_of_turn(), "");
}

TEST(chat_template, refuses_what_it_cannot_render) {
  auto unknown = chat_template::detect("[INST] {{ messages }}").render({{"user", "Hi"}});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message, HasSubstr("not one kvactor renders"));
  auto role = chat_template::detect(llama3).render({{"user", "a"}, {"tool", "b"}});
  ASSERT_FALSE(role.has_value());
  EXPECT_THAT(role.error().message, HasSubstr("messages[1].role"));
  EXPECT_FALSE(chat_template::detect(llama3).render({}).has_value());
}

TEST(chat_template, loads_the_template_and_bos_token_from_the_folder) {
  temp_dir dir;
  EXPECT_EQ(chat_template::load(dir.path())->format(), chat_format::plain); // no file
  auto write = [&](const std::string& json) {
    std::ofstream(dir.path() / "tokenizer_config.json") << json;
  };
  write(R"({"bos_token":{"content":"<|begin_of_text|>","lstrip":false},"chat_template":)"
        R"("{{ '<|start_header_id|>' }}{{ '<|eot_id|>' }}"})");
  auto t = chat_template::load(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->format(), chat_format::llama3);
  EXPECT_EQ(render(*t, {{"user", "x"}}).rfind("<|begin_of_text|><|start_header_id|>user", 0), 0u);

  write(R"({"bos_token":null,"chat_template":[{"name":"tool_use","template":"x"},)"
        R"({"name":"default","template":"<|im_start|><|im_end|>"}]})");
  EXPECT_EQ(chat_template::load(dir.path())->format(), chat_format::chatml);

  write(R"({"chat_template":7})");
  auto bad = chat_template::load(dir.path());
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("tokenizer_config.json"));
  EXPECT_THAT(bad.error().message, HasSubstr("chat_template"));
}

} // namespace
} // namespace kvactor::model
