#include "model/grammar/grammar_matcher.hpp"

#include "model/grammar/gbnf.hpp"
#include "grammar_walk.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using testing::parse;

TEST(grammar_matcher, a_refused_advance_leaves_the_state_as_it_was) {
  grammar_matcher m(parse(R"(root ::= "ab" "c"*)"));
  EXPECT_FALSE(m.can_end());
  ASSERT_TRUE(m.advance("a"));
  const std::string before = m.key(m.current());
  EXPECT_FALSE(m.advance("bx"));
  EXPECT_EQ(m.key(m.current()), before);
  ASSERT_TRUE(m.advance("b"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.must_end());
  ASSERT_TRUE(m.advance("ccc"));
  EXPECT_TRUE(m.can_end());
}

TEST(grammar_matcher, must_end_when_nothing_may_follow) {
  grammar_matcher m(parse(R"(root ::= "yes" | "no")"));
  ASSERT_TRUE(m.advance("no"));
  EXPECT_TRUE(m.must_end());
  EXPECT_FALSE(m.advance("o"));
}

TEST(grammar_matcher, repetitions_do_not_grow_the_stacks) {
  // NOTE: the state's key holds every stack's slots: equal keys after 10
  // and 1000 items mean equal stacks.
  grammar_matcher m(parse(R"(root ::= "[" item ("," item)* "]"  item ::= [0-9]+)"));
  ASSERT_TRUE(m.advance("[1"));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(m.advance(",23"));
  const std::string after_ten = m.key(m.current());
  for (int i = 0; i < 990; ++i) ASSERT_TRUE(m.advance(",23"));
  EXPECT_EQ(m.key(m.current()), after_ten);
}

TEST(grammar_matcher, nesting_grows_the_stacks_and_closing_shrinks_them) {
  grammar_matcher m(parse(R"(root ::= v  v ::= "1" | "[" v "]")"));
  ASSERT_TRUE(m.advance("[[1"));
  const std::string deep = m.key(m.current());
  ASSERT_TRUE(m.advance("]"));
  EXPECT_NE(m.key(m.current()), deep);
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.advance("]]"));
  ASSERT_TRUE(m.advance("]"));
  EXPECT_TRUE(m.must_end());
}

TEST(grammar_matcher, ambiguous_grammars_keep_one_node_per_stack) {
  // Many ways to read "aaa...": the state keeps every reading but no copies.
  grammar_matcher m(parse(R"(root ::= x*  x ::= "a" | "aa" | "a" "a")"));
  ASSERT_TRUE(m.advance(std::string(200, 'a')));
  EXPECT_TRUE(m.can_end());
  EXPECT_LE(m.current().tops.size(), 5u); // 3 starts of x, 2 second bytes
}

TEST(grammar_matcher, equal_states_of_two_matchers_have_equal_keys) {
  auto g = parse(R"(root ::= "{" ("\"k\":" v)? "}"  v ::= [0-9]+ | "{" ("\"k\":" v)? "}")");
  grammar_matcher a(g), b(g);
  ASSERT_TRUE(a.advance("{\"k\":{\"k\":1"));
  ASSERT_TRUE(b.advance("{\"k\":{"));
  ASSERT_TRUE(b.advance("\"k\":3"));
  EXPECT_EQ(a.key(a.current()), b.key(b.current()));
  ASSERT_TRUE(b.advance("}"));
  EXPECT_NE(a.key(a.current()), b.key(b.current()));
}

} // namespace
} // namespace kvactor::model
