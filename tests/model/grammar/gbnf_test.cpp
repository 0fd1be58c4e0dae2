#include "model/grammar/gbnf.hpp"

#include "grammar_walk.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <random>

namespace kvactor::model {
namespace {

std::shared_ptr<const grammar> parse(std::string_view text) {
  auto g = parse_gbnf(text);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().message);
  return g ? std::make_shared<const grammar>(std::move(*g)) : nullptr;
}

std::string refusal(std::string_view text) {
  auto g = parse_gbnf(text);
  EXPECT_FALSE(g.has_value());
  return g ? "" : g.error().message;
}

// A JSON grammar as GBNF users write one.
constexpr std::string_view json_gbnf = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [0-9]?)? ws
# comments and blank lines between rules

ws ::= | " " | "\n" [ \t]{0,20}
)";

TEST(gbnf, json_grammar_accepts_json_and_refuses_the_rest) {
  auto g = parse(json_gbnf);
  ASSERT_TRUE(g);
  for (std::string_view ok : {R"({})", R"({"a": 1})", R"({"a":[1,2.5,-3e10,true,null],"b":{}})",
                              R"({"s": "x\"y\\z\u00e9 é"})", "{\n  \"k\": [ ]}"})
    EXPECT_TRUE(testing::accepts(g, ok)) << ok;
  for (std::string_view bad : {R"([])", R"({"a": })", R"({"a": 01})", R"({"a": "\q"})",
                               R"({"a": 1,})", R"({"a" 1})", "{\"a\": \"\x01\"}", R"({)"})
    EXPECT_FALSE(testing::accepts(g, bad)) << bad;
}

TEST(gbnf, classes_are_code_points_and_escapes_decode) {
  auto g = parse(R"(root ::= [α-ω]+ "\x41\u00e9\U0001F600" [^a-z] . "\"\\\n\t")");
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::accepts(g, "αβωAé😀Z€\"\\\n\t"));
  EXPECT_TRUE(testing::accepts(g, "λAé😀日\n\"\\\n\t"));
  EXPECT_FALSE(testing::accepts(g, "aAé😀ZZ\"\\\n\t")); // 'a' is not in [α-ω]
  EXPECT_FALSE(testing::accepts(g, "αAé😀zZ\"\\\n\t")); // 'z' is in a-z
  EXPECT_FALSE(testing::accepts(g, "α\xCE"));          // half a character
}

TEST(gbnf, repetitions_count_exactly) {
  auto g = parse(R"(root ::= "a"{2,4} "b"{3} "c"{1,} "d"?)");
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::accepts(g, "aabbbc"));
  EXPECT_TRUE(testing::accepts(g, "aaaabbbcccd"));
  EXPECT_FALSE(testing::accepts(g, "abbbc"));
  EXPECT_FALSE(testing::accepts(g, "aaaaabbbc"));
  EXPECT_FALSE(testing::accepts(g, "aabbc"));
  EXPECT_FALSE(testing::accepts(g, "aabbb"));
}

TEST(gbnf, random_sentences_of_a_json_grammar_are_json_objects_to_a_json_parser) {
  auto g = parse(json_gbnf);
  ASSERT_TRUE(g);
  std::mt19937_64 rng(7);
  simdjson::dom::parser parser;
  for (int i = 0; i < 200; ++i) {
    auto s = testing::random_sentence(g, rng, 120);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(testing::accepts(g, *s)) << *s;
    simdjson::dom::object o;
    EXPECT_FALSE(parser.parse(*s).get(o)) << *s; // simdjson: not the grammar engine
  }
}

TEST(gbnf, refusals_name_what_and_where) {
  EXPECT_NE(refusal("root ::= foo").find("'foo' is used but not defined"), std::string::npos);
  EXPECT_NE(refusal("start ::= \"a\"").find("no rule 'root'"), std::string::npos);
  EXPECT_NE(refusal("root ::= root \"a\" | \"b\"").find("left recursion"), std::string::npos);
  EXPECT_NE(refusal("root ::= (\"a\"?)*").find("may be empty"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"a").find("line 1, column 12: a literal without"),
            std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\"\n  x ::= [b-a]").find("line 2"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\"{3,2}").find("n < m"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\"{1,20000}").find("over 10000"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\" )").find("')' without"), std::string::npos);
}

TEST(gbnf, refuses_a_rule_it_reaches_that_no_finite_text_matches) {
  // A class of nothing, and a rule that always needs itself again: a text
  // reaching either could neither go on nor end.
  EXPECT_NE(refusal("root ::= \"a\" []")
              .find("rule 'root' matches no finite text (it needs a character of an empty"),
            std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\" root").find("rule 'root' matches no finite text (it always"),
            std::string::npos);
  // The rule to blame, not the root that reaches it.
  EXPECT_NE(refusal("root ::= x\nx ::= \"(\" x \")\"").find("rule 'x' matches no finite text"),
            std::string::npos);
  EXPECT_NE(refusal("root ::= \"a\" | \"b\" y\ny ::= \"c\" z\nz ::= \"d\" y")
              .find("rule 'y' matches no finite text (it always needs itself again)"),
            std::string::npos);
  // A chain of 50,000 rules, each needing the next: found in one pass over
  // the references (it was a pass per rule).
  std::string chain = "root ::= \"x\" r1\n";
  for (int i = 1; i < 50000; ++i)
    chain.append("r").append(std::to_string(i)).append(" ::= \"x\" r").append(std::to_string(i + 1))
      .append("\n");
  EXPECT_NE(parse(chain + "r50000 ::= \"x\"\n"), nullptr);
  EXPECT_NE(refusal(chain + "r50000 ::= \"x\" r1\n").find("matches no finite text"),
            std::string::npos);
  // Rules the root never reaches are not its concern.
  EXPECT_NE(parse("root ::= \"a\"\nloop ::= \"b\" loop"), nullptr);
  EXPECT_NE(parse("root ::= \"(\" root \")\" | \"x\""), nullptr);
}

} // namespace
} // namespace kvactor::model
