#include "actors/runner/constraint_compiler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const model::token_vocabulary> vocabulary() {
  return std::make_shared<const model::token_vocabulary>(
    std::vector<std::string>{"a", "b", "ab", "{", "}", "\"", ":", "1", ""},
    std::vector<token_id>{8}, 9);
}

output_constraint regex(std::string text) { return {constraint_kind::regex, std::move(text), {}}; }

TEST(constraint_compiler, one_constraint_compiles_once_and_is_shared) {
  constraint_compiler c(vocabulary());
  auto first = c.compile(regex("a+b"));
  auto again = c.compile(regex("a+b"));
  ASSERT_TRUE(first.has_value() && again.has_value());
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(c.num_compiled(), 1);
  auto other = c.compile({constraint_kind::choice, {}, {"a+b"}}); // same text, another kind
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(*other, *first);
  EXPECT_EQ(c.num_compiled(), 2);
}

TEST(constraint_compiler, keeps_the_grammars_last_used) {
  constraint_compiler c(vocabulary(), 2);
  ASSERT_TRUE(c.compile(regex("a")).has_value());
  ASSERT_TRUE(c.compile(regex("b")).has_value());
  ASSERT_TRUE(c.compile(regex("a")).has_value()); // used again: b is the oldest
  ASSERT_TRUE(c.compile(regex("ab")).has_value());
  EXPECT_EQ(c.num_compiled(), 3);
  ASSERT_TRUE(c.compile(regex("a")).has_value());
  EXPECT_EQ(c.num_compiled(), 3);
  ASSERT_TRUE(c.compile(regex("b")).has_value()); // dropped, compiled again
  EXPECT_EQ(c.num_compiled(), 4);
}

TEST(constraint_compiler, every_kind_compiles_and_refusals_name_the_construct) {
  constraint_compiler c(vocabulary());
  for (const output_constraint& ok : {
         output_constraint{constraint_kind::json_object, {}, {}},
         output_constraint{constraint_kind::json_schema, R"({"type": "integer"})", {}},
         output_constraint{constraint_kind::choice, {}, {"ab", "b"}},
         output_constraint{constraint_kind::grammar, R"(root ::= "a"+)", {}},
         output_constraint{constraint_kind::tool_calls,
                           R"({"format": "json", "parallel": false, "functions": [{"name": "f",)"
                           R"( "parameters": null}]})",
                           {}},
       })
    EXPECT_TRUE(c.compile(ok).has_value()) << static_cast<int>(ok.kind);
  struct bad {
    output_constraint c;
    std::string says;
  };
  for (const bad& b : {
         bad{regex("(a"), "regex"},
         bad{{constraint_kind::choice, {}, {}}, "choice: needs at least one string"},
         bad{{constraint_kind::choice, {}, {"a", ""}}, "choice: an empty string"},
         bad{{constraint_kind::json_schema, "{", {}}, "json_schema: schema: not valid JSON"},
         bad{{constraint_kind::grammar, "root ::= x", {}},
             "grammar: rule 'x' is used but not defined"},
       }) {
    auto r = c.compile(b.c);
    ASSERT_FALSE(r.has_value()) << b.says;
    EXPECT_THAT(r.error().message, HasSubstr(b.says));
  }
}

} // namespace
} // namespace kvactor
