// Published chat templates rendering a conversation with tools: the
// request's tools, an assistant's call (arguments as an object, as the
// templates read them) and the tool's answer reach the prompt in each
// family's own words, and each template's tool-call format is the one it
// teaches. Jinja2 renders them (chat/jinja_template.hpp).

#include "model/chat_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view tools =
  R"([{"type":"function","function":{"name":"get_weather",)"
  R"("description":"The weather in a city","parameters":)"
  R"({"type":"object","properties":{"city":{"type":"string"}}}}}])";

std::vector<chat_message> conversation() {
  std::vector<chat_message> m{{"user", "Weather in Paris?"}, {"assistant", ""}, {"tool", "22C"}};
  m[1].tool_calls_json = R"([{"id":"call_1","type":"function","function":{"name":"get_weather",)"
                         R"("arguments":{"city":"Paris"}}}])";
  m[2].tool_call_id = "call_1";
  return m;
}

result<std::string> render(std::string_view family) {
  auto t = chat_template::load(std::filesystem::path(KVACTOR_TOKENIZER_FILES_DIR) / family);
  if (!t) return t.error();
  chat_options o;
  o.tools_json = std::string(tools);
  o.now = 0;
  return t->render(conversation(), o);
}

TEST(chat_template_tools, qwen2_5_writes_tools_calls_and_answers_as_hermes_blocks) {
  auto t = chat_template::load(std::filesystem::path(KVACTOR_TOKENIZER_FILES_DIR) / "qwen2_5");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->tool_format(), tool_call_format::hermes);
  auto text = render("qwen2_5");
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_THAT(*text, HasSubstr("<tools>"));
  EXPECT_THAT(*text, HasSubstr("\"description\": \"The weather in a city\""));
  EXPECT_THAT(*text, HasSubstr("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                               "{\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_THAT(*text, HasSubstr("<tool_response>\n22C\n</tool_response>"));
}

TEST(chat_template_tools, llama3_2_writes_tools_calls_and_answers_as_json) {
  auto t = chat_template::load(std::filesystem::path(KVACTOR_TOKENIZER_FILES_DIR) / "llama3_2");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->tool_format(), tool_call_format::json);
  auto text = render("llama3_2");
  ASSERT_TRUE(text.has_value()) << text.error().message;
  EXPECT_THAT(*text, HasSubstr("\"name\": \"get_weather\""));
  EXPECT_THAT(*text, HasSubstr("The weather in a city"));
  EXPECT_THAT(*text,
              HasSubstr("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"));
  EXPECT_THAT(*text, HasSubstr("ipython<|end_header_id|>"));
  EXPECT_THAT(*text, HasSubstr("22C"));
}

} // namespace
} // namespace kvactor::model
