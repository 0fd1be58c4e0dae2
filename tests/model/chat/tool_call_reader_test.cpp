#include "model/chat/tool_call_reader.hpp"

#include "model/chat/tool_calls.hpp"

#include <gtest/gtest.h>

#include <random>

namespace kvactor::model {
namespace {

using call = tool_call_reader::call;

constexpr std::string_view hermes_calls =
  "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
  "{\"city\": \"Oslo, \\\"the\\\" {capital}\","
  " \"days\": [1, 2.50, -3e2], \"deep\": {\"a\": [{}, []], \"b\": null}}}\n</tool_call>\n"
  "<tool_call>\n{\"name\": \"caf\\u00e9\", \"arguments\": {}}\n</tool_call>";

tool_call_reader read_whole(std::string_view text) {
  tool_call_reader r;
  r.feed(text);
  return r;
}

TEST(tool_call_reader, reads_names_decoded_and_arguments_compact_as_written) {
  const auto r = read_whole(hermes_calls);
  ASSERT_EQ(r.calls().size(), 2u);
  EXPECT_EQ(r.calls()[0].name, "get_weather");
  // Whitespace outside strings goes; the strings, numbers and escapes stay as written.
  EXPECT_EQ(r.calls()[0].arguments, R"({"city":"Oslo, \"the\" {capital}","days":[1,2.50,-3e2],)"
                                    R"("deep":{"a":[{},[]],"b":null}})");
  EXPECT_TRUE(r.calls()[0].closed);
  EXPECT_EQ(r.calls()[1].name, "caf\xc3\xa9");
  EXPECT_EQ(r.calls()[1].arguments, "{}");
}

TEST(tool_call_reader, its_arguments_are_the_whole_answers_calls) {
  for (auto [text, format] :
       {std::pair{hermes_calls, tool_call_format::hermes},
        std::pair{std::string_view(R"({"name": "say", "parameters": {"text": "a; b"}}; )"
                                   R"({"parameters": {"x": [1, {"y": "}"}]}, "name": "f"})"),
                  tool_call_format::json}}) {
    const auto whole = parse_tool_calls(text, format);
    ASSERT_TRUE(whole.has_value()) << text;
    const auto r = read_whole(text);
    ASSERT_EQ(r.calls().size(), whole->size());
    for (size_t k = 0; k < whole->size(); ++k) {
      EXPECT_EQ(r.calls()[k].name, (*whole)[k].name);
      EXPECT_EQ(r.calls()[k].arguments, (*whole)[k].arguments);
    }
  }
}

// Fed in pieces cut anywhere, each call's name comes whole or not at all and
// its arguments only grow, ending as those of the whole text.
TEST(tool_call_reader, pieces_cut_anywhere_grow_to_the_whole) {
  const auto whole = read_whole(hermes_calls);
  std::mt19937 rng(7);
  for (int run = 0; run < 200; ++run) {
    tool_call_reader r;
    std::vector<std::string> seen(2);
    for (size_t at = 0; at < hermes_calls.size();) {
      const size_t len = std::uniform_int_distribution<size_t>(1, 6)(rng);
      r.feed(hermes_calls.substr(at, len));
      at += len;
      for (size_t k = 0; k < r.calls().size(); ++k) {
        const call& c = r.calls()[k];
        if (c.named) {
          EXPECT_EQ(c.name, whole.calls()[k].name);
        }
        EXPECT_TRUE(c.arguments.starts_with(seen[k])) << c.arguments;
        EXPECT_TRUE(whole.calls()[k].arguments.starts_with(c.arguments)) << c.arguments;
        seen[k] = c.arguments;
      }
    }
    ASSERT_EQ(r.calls().size(), 2u);
    EXPECT_EQ(seen[0], whole.calls()[0].arguments);
    EXPECT_EQ(seen[1], whole.calls()[1].arguments);
  }
}

TEST(tool_call_reader, a_cut_call_is_named_once_its_name_has_closed) {
  const std::string text = R"(<tool_call>{"name": "get_wea)";
  auto r = read_whole(text);
  ASSERT_EQ(r.calls().size(), 1u);
  EXPECT_FALSE(r.calls()[0].named);
  r.feed(R"(ther", "arguments": {"city": "Os)");
  EXPECT_TRUE(r.calls()[0].named);
  EXPECT_EQ(r.calls()[0].name, "get_weather");
  EXPECT_EQ(r.calls()[0].arguments, R"({"city":"Os)");
  EXPECT_FALSE(r.calls()[0].closed);
}

TEST(tool_call_reader, reads_the_first_name_and_arguments_of_a_call_and_skips_other_keys) {
  const auto r = read_whole(
    R"({"id": {"name": "inner"}, "name": "f", "arguments": {"x": 1}, "name": "g", "parameters": [2]})");
  ASSERT_EQ(r.calls().size(), 1u);
  EXPECT_EQ(r.calls()[0].name, "f");
  EXPECT_EQ(r.calls()[0].arguments, R"({"x":1})");
  EXPECT_TRUE(r.calls()[0].closed);
}

TEST(tool_call_reader, text_between_objects_is_skipped) {
  EXPECT_TRUE(read_whole("Hello there; <tool_call>\n").calls().empty());
  const auto r = read_whole(R"(x {"name": 3, "arguments": "a"} y)");
  ASSERT_EQ(r.calls().size(), 1u);
  EXPECT_FALSE(r.calls()[0].named); // not a string
  EXPECT_EQ(r.calls()[0].arguments, R"("a")");
}

} // namespace
} // namespace kvactor::model
