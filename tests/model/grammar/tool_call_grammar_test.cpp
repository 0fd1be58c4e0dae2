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
      auto g = tool_call_grammar(functions, format, {.parallel = parallel});
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
  const std::string spec = tool_call_spec(functions, tool_call_format::hermes, {});
  auto g = tool_call_grammar_of_spec(spec);
  ASSERT_TRUE(g.has_value()) << g.error().message;
  auto shared = std::make_shared<const grammar>(std::move(*g));
  EXPECT_TRUE(
    testing::accepts(shared, "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(
    testing::accepts(shared, "<tool_call>\n{\"name\": \"pong\", \"arguments\": {}}\n</tool_call>"));
  auto bad = tool_call_grammar({{"f", R"({"type": "integer", "minimum": 1})"}},
                               tool_call_format::json, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("function 'f': json_schema: schema: minimum is not supported"),
            std::string::npos)
    << bad.error().message;
  EXPECT_FALSE(tool_call_grammar({}, tool_call_format::json, {}).has_value());
  EXPECT_FALSE(tool_call_grammar_of_spec("{}").has_value());
  EXPECT_FALSE(tool_call_grammar_of_spec(
                 R"({"format": "json", "parallel": true, "lazy": 1, "functions": []})")
                 .has_value());
}

// tool_choice auto: text that does not begin a call, or calls held to
// their schemas once it does.
TEST(tool_call_grammar, a_lazy_grammar_takes_text_or_calls_once_one_begins) {
  for (tool_call_format format : {tool_call_format::json, tool_call_format::hermes}) {
    const std::string spec = tool_call_spec(functions, format, {.parallel = true, .lazy = true});
    auto g = tool_call_grammar_of_spec(spec);
    ASSERT_TRUE(g.has_value()) << g.error().message;
    auto shared = std::make_shared<const grammar>(std::move(*g));
    const std::string_view trigger = tool_call_trigger(format);
    const auto join = [](std::string_view a, std::string_view b) { // (GCC 12's -Wrestrict
      std::string out(a);                                           // flags "lit" + string)
      return out.append(b);
    };
    const std::string ping = format == tool_call_format::hermes
                               ? "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n"
                                 "</tool_call>"
                               : R"({"name": "ping", "parameters": {}})";
    for (const std::string& text :
         {std::string(), std::string("Hello"), std::string(" \n "), std::string("\n{\"x\": 1}"),
          std::string(trigger.substr(0, trigger.size() - 1)),
          join(trigger.substr(0, trigger.size() - 1), "x and more"), ping, join(" \n", ping)})
      EXPECT_TRUE(testing::accepts(shared, text)) << to_string(format) << ": " << text;
    std::string pong = ping;
    pong.replace(pong.find("ping"), 4, "pong");
    for (const std::string& text : {pong, join(trigger, "x"), join(" ", trigger),
                                    join(ping, " and some text"), join(join("Hi ", ping), "x")})
      EXPECT_EQ(testing::accepts(shared, text), text.starts_with("Hi")) << to_string(format)
                                                                        << ": " << text;
    // Sentences that begin a call are calls that parse and fit.
    std::mt19937_64 rng(11);
    std::set<std::string> names;
    for (int i = 0; i < 50; ++i) {
      auto text = testing::random_sentence(shared, rng, 300, 0.3, join("\n", trigger));
      ASSERT_TRUE(text.has_value());
      EXPECT_TRUE(begins_tool_call(*text, format));
      auto calls = parse_tool_calls(*text, format);
      ASSERT_TRUE(calls.has_value()) << *text;
      for (const tool_call& c : *calls) {
        EXPECT_TRUE(fits(c)) << *text;
        names.insert(c.name);
      }
    }
    EXPECT_EQ(names.size(), 3u) << to_string(format);
  }
}

} // namespace
} // namespace kvactor::model
