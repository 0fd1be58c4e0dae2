#include "model/chat_template.hpp"

#include "tests/model/chatml_template.hpp"
#include "tests/model/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

const std::string& chatml = kvactor::test_support::chatml_template_text;

chat_template compiled(const std::string& text, std::map<std::string, std::string> special = {}) {
  auto t = chat_template::from_text(text, std::move(special));
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message);
  return t ? *t : chat_template::plain();
}

std::string render(const chat_template& t, const std::vector<chat_message>& m,
                   chat_options o = {}) {
  auto r = t.render(m, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : "";
}

TEST(chat_template, renders_the_messages_and_the_generation_prompt) {
  const auto t = compiled(chatml);
  const std::vector<chat_message> m = {{"system", "S"}, {"user", "Hi"}};
  EXPECT_EQ(render(t, m),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  chat_options no_prompt;
  no_prompt.add_generation_prompt = false;
  EXPECT_EQ(render(t, m, no_prompt),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(chat_template, passes_the_special_tokens_and_the_request_kwargs) {
  const auto t = compiled("{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
                          {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  EXPECT_EQ(render(t, {{"user", "x"}}), "<s>x</s>");
  chat_options o;
  o.template_kwargs = R"({"enable_thinking":false,"messages":[],"bos_token":"?"})";
  // A kwarg reaches the template; messages and special tokens are not replaced.
  EXPECT_THAT(render(compiled(chatml), {{"user", "q"}}, o), HasSubstr("<think>\n\n</think>"));
  EXPECT_EQ(render(t, {{"user", "x"}}, o), "<s>x</s>");
}

TEST(chat_template, prints_the_date_it_is_given) {
  const auto t = compiled("Today Date: {{ strftime_now('%d %b %Y') }}\n{{ messages[0].content }}");
  chat_options o;
  o.now = 1'764'000'000; // 2025-11-24 UTC
  EXPECT_THAT(render(t, {{"user", "x"}}, o), HasSubstr("Today Date: 2"));
  EXPECT_THAT(render(t, {{"user", "x"}}, o), HasSubstr(" Nov 2025\n"));
}

TEST(chat_template, finds_the_end_of_a_turn_in_what_the_template_writes) {
  EXPECT_EQ(compiled(chatml).end_of_turn(), "<|im_end|>");
  EXPECT_EQ(compiled("{% for m in messages %}{% if m.role == 'assistant' %} {{ m.content }} "
                     "{{ eos_token }}{% else %}[INST] {{ m.content }} [/INST]{% endif %}"
                     "{% endfor %}",
                     {{"eos_token", "</s>"}})
              .end_of_turn(),
            "</s>");
  // A template that refuses the probe conversation: EOS ends a turn.
  EXPECT_EQ(compiled("{{ raise_exception('a system message is required') }}",
                     {{"eos_token", "<|end|>"}})
              .end_of_turn(),
            "<|end|>");
  EXPECT_EQ(compiled("{% for m in messages %}{{ m.content }}{% endfor %}").end_of_turn(), "");
  EXPECT_EQ(chat_template::plain().end_of_turn(), "");
}

TEST(chat_template, renders_plain_without_a_template) {
  EXPECT_TRUE(chat_template::plain().is_plain());
  EXPECT_EQ(render(chat_template::plain(), {{"system", "S"}, {"user", "Hi"}}),
            "system: S\nuser: Hi\nassistant:");
}

TEST(chat_template, says_what_the_template_refused) {
  const auto t = compiled(chatml);
  auto r = t.render({{"user", "a"}, {"tool", "b"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("unknown role tool"));
  EXPECT_FALSE(t.render({}).has_value());
  auto syntax = chat_template::from_text("{% if %}");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_THAT(syntax.error().message, HasSubstr("chat template: line 1"));
}

TEST(chat_template, loads_the_template_and_special_tokens_from_the_folder) {
  temp_dir dir;
  EXPECT_TRUE(chat_template::load(dir.path())->is_plain()); // no file
  auto write = [&](const std::string& json) {
    std::ofstream(dir.path() / "tokenizer_config.json") << json;
  };
  write(R"({"bos_token":{"content":"<|begin_of_text|>","lstrip":false},"eos_token":"<|eot_id|>",)"
        R"("chat_template":"{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"})");
  auto t = chat_template::load(dir.path());
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(render(*t, {{"user", "x"}}), "<|begin_of_text|>x<|eot_id|>");

  write(R"({"bos_token":null,"chat_template":[{"name":"tool_use","template":"T"},)"
        R"({"name":"default","template":"D"}]})");
  EXPECT_EQ(render(*chat_template::load(dir.path()), {{"user", "x"}}), "D");
  // chat_template.jinja wins over tokenizer_config.json, as in transformers.
  std::ofstream(dir.path() / "chat_template.jinja") << "J{{ messages|length }}";
  EXPECT_EQ(render(*chat_template::load(dir.path()), {{"user", "x"}}), "J1");
  std::ofstream(dir.path() / "chat_template.jinja") << "{% endif %}";
  auto syntax = chat_template::load(dir.path());
  ASSERT_FALSE(syntax.has_value());
  EXPECT_THAT(syntax.error().message, HasSubstr("chat_template.jinja: chat template: line 1"));
  std::filesystem::remove(dir.path() / "chat_template.jinja");

  write(R"({"chat_template":7})");
  auto bad = chat_template::load(dir.path());
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("tokenizer_config.json"));
  EXPECT_THAT(bad.error().message, HasSubstr("chat_template"));
}

TEST(chat_template, a_template_file_given_replaces_the_folders_and_keeps_its_special_tokens) {
  temp_dir dir;
  std::ofstream(dir.path() / "tokenizer_config.json")
    << R"({"bos_token":"<s>","chat_template":"{% if %}"})";
  ASSERT_FALSE(chat_template::load(dir.path()).has_value());
  const auto given = dir.path() / "given.jinja";
  std::ofstream(given) << "{{ bos_token }}{{ messages|length }}";
  auto t = chat_template::load(dir.path(), given);
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(render(*t, {{"user", "x"}}), "<s>1");
  // Over the folder's chat_template.jinja too.
  std::ofstream(dir.path() / "chat_template.jinja") << "J";
  EXPECT_EQ(render(*chat_template::load(dir.path(), given), {{"user", "x"}}), "<s>1");

  // Over a folder whose own template is not even a string.
  std::ofstream(dir.path() / "tokenizer_config.json") << R"({"bos_token":"<s>","chat_template":7})";
  ASSERT_FALSE(chat_template::load(dir.path()).has_value());
  EXPECT_EQ(render(*chat_template::load(dir.path(), given), {{"user", "x"}}), "<s>1");

  std::ofstream(given) << "{% endfor %}";
  auto syntax = chat_template::load(dir.path(), given);
  ASSERT_FALSE(syntax.has_value());
  EXPECT_THAT(syntax.error().message, HasSubstr("given.jinja: chat template: line 1"));
  std::ofstream(dir.path() / "empty.jinja").flush();
  for (const auto& [file, why] : {std::pair{dir.path() / "missing.jinja", "no such file"},
                                  std::pair{dir.path(), "not a file"},
                                  std::pair{dir.path() / "empty.jinja", "is empty"}}) {
    auto r = chat_template::load(dir.path(), file);
    ASSERT_FALSE(r.has_value()) << file;
    EXPECT_EQ(r.error().message, file.string() + ": " + why);
  }
}

TEST(chat_template, the_plain_rendering_writes_an_assistants_calls_as_json_calls) {
  chat_message call{"assistant", ""};
  call.tool_calls_json = R"([{"id":"c1","type":"function","function":{"name":"f","arguments":{"x":1}}},)"
                         R"({"id":"c2","type":"function","function":{"name":"g","arguments":{}}}])";
  chat_message answer{"tool", "42"};
  answer.tool_call_id = "c1";
  auto text = chat_template::plain().render({{"user", "hi"}, call, answer});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "user: hi\nassistant: {\"name\": \"f\", \"parameters\": {\"x\":1}}; "
                   "{\"name\": \"g\", \"parameters\": {}}\ntool: 42\nassistant:");
}

} // namespace
} // namespace kvactor::model
