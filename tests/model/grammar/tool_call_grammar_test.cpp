#include "model/grammar/tool_call_grammar.hpp"

#include "model/chat/tool_calls.hpp"
#include "grammar_walk.hpp"

#include <gtest/gtest.h>

#include <simdjson.h>

#include <random>
#include <set>

namespace kvactor::model {
namespace {

const std::vector<tool_function> functions = {
  {"get_weather", R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 8},)"
                  R"( "unit": {"enum": ["C", "F"]}}, "required": ["city", "unit"]})"},
  {"get_time", R"({"type": "object", "properties": {"zone": {"type": "integer"}}})"},
  {"ping", ""},
};

// Whether `arguments` fit the function's schema above (checked by hand).
bool fits(const tool_call& call) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(call.arguments).get(o)) return false;
  if (call.name == "get_weather") {
    std::string_view city, unit;
    return !o["city"].get(city) && !o["unit"].get(unit) && (unit == "C" || unit == "F") &&
           o.size() == 2;
  }
  if (call.name == "get_time") {
    int64_t zone;
    return o.size() == 0 || (o.size() == 1 && !o["zone"].get(zone));
  }
  return call.name == "ping";
}

TEST(tool_call_grammar, every_sentence_is_calls_that_parse_and_fit_their_schemas) {
  for (tool_call_format format : {tool_call_format::json, tool_call_format::hermes})
    for (bool parallel : {false, true}) {
      auto g = tool_call_grammar(functions, format, parallel);
      ASSERT_TRUE(g.has_value()) << g.error().message;
      auto shared = std::make_shared<const grammar>(std::move(*g));
      std::mt19937_64 rng(5);
      std::set<std::string> names;
      size_t most = 0;
      for (int i = 0; i < 200; ++i) {
        auto text = testing::random_sentence(shared, rng, 300);
        ASSERT_TRUE(text.has_value());
        auto calls = parse_tool_calls(*text, format);
        ASSERT_TRUE(calls.has_value()) << *text;
        most = std::max(most, calls->size());
        for (const tool_call& c : *calls) {
          EXPECT_TRUE(fits(c)) << *text;
          names.insert(c.name);
        }
      }
      EXPECT_EQ(names.size(), 3u);
      EXPECT_EQ(most > 1, parallel) << to_string(format);
    }
}

TEST(tool_call_grammar, the_spec_round_trips_and_refusals_name_the_function) {
  const std::string spec = tool_call_spec(functions, tool_call_format::hermes, false);
  auto g = tool_call_grammar_of_spec(spec);
  ASSERT_TRUE(g.has_value()) << g.error().message;
  auto shared = std::make_shared<const grammar>(std::move(*g));
  EXPECT_TRUE(
    testing::accepts(shared, "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(
    testing::accepts(shared, "<tool_call>\n{\"name\": \"pong\", \"arguments\": {}}\n</tool_call>"));
  auto bad = tool_call_grammar({{"f", R"({"type": "integer", "minimum": 1})"}},
                               tool_call_format::json, false);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("function 'f': json_schema: schema: minimum is not supported"),
            std::string::npos)
    << bad.error().message;
  EXPECT_FALSE(tool_call_grammar({}, tool_call_format::json, false).has_value());
  EXPECT_FALSE(tool_call_grammar_of_spec("{}").has_value());
}

} // namespace
} // namespace kvactor::model
