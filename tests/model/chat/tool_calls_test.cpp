#include "model/chat/tool_calls.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using f = tool_call_format;

TEST(tool_calls, hermes_blocks_parse_with_whitespace_around_them) {
  auto calls = parse_tool_calls(
    "\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
    "\n<tool_call>{\"name\":\"get_time\",\"arguments\":{}}</tool_call>\n",
    f::hermes);
  ASSERT_TRUE(calls.has_value());
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].name, "get_weather");
  EXPECT_EQ((*calls)[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ((*calls)[1].name, "get_time");
  EXPECT_EQ((*calls)[1].arguments, "{}");
}

TEST(tool_calls, json_calls_parse_with_parameters_or_arguments_and_semicolons_in_strings) {
  auto calls = parse_tool_calls(
    R"({"name": "say", "parameters": {"text": "a; b"}}; {"name": "f", "arguments": {"x": 1}})",
    f::json);
  ASSERT_TRUE(calls.has_value());
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].arguments, R"({"text":"a; b"})");
  EXPECT_EQ((*calls)[1].name, "f");
}

TEST(tool_calls, anything_else_is_not_calls) {
  for (std::string_view text :
       {"", "Hello", "<tool_call>{\"name\": \"f\", \"arguments\": {}}", // unclosed
        "Sure: <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": \"f\"}</tool_call>",                    // no arguments
        "<tool_call>{\"name\": \"f\", \"arguments\": 3}</tool_call>"}) // not an object
    EXPECT_FALSE(parse_tool_calls(text, f::hermes).has_value()) << text;
  for (std::string_view text : {"{\"name\": \"f\", \"parameters\": {}} and more", "[1, 2]",
                                "{\"name\": 3, \"parameters\": {}}"})
    EXPECT_FALSE(parse_tool_calls(text, f::json).has_value()) << text;
}

TEST(tool_calls, a_stream_may_be_calls_while_its_text_can_still_open_one) {
  EXPECT_TRUE(may_be_tool_calls("", f::hermes));
  EXPECT_TRUE(may_be_tool_calls("\n<tool", f::hermes));
  EXPECT_TRUE(may_be_tool_calls("<tool_call>\n{\"na", f::hermes));
  EXPECT_FALSE(may_be_tool_calls("<tool_cab", f::hermes));
  EXPECT_FALSE(may_be_tool_calls("Hi", f::hermes));
  EXPECT_TRUE(may_be_tool_calls(" {", f::json));
  EXPECT_FALSE(may_be_tool_calls("The", f::json));
}

TEST(tool_calls, the_format_is_the_one_the_template_writes) {
  EXPECT_EQ(tool_call_format_of("{{- '<tool_call>\\n' }}{{ tool_call | tojson }}"), f::hermes);
  EXPECT_EQ(tool_call_format_of("{\"name\": function name, \"parameters\": ...}"), f::json);
}

} // namespace
} // namespace kvactor::model
