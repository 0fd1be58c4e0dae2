#include "model/tokenizer/regex_split.hpp"

#include "model/tokenizer/pretokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

regex_split compiled(std::string_view regex) {
  auto r = regex_split::compile(regex);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return std::move(r.value());
}

// Isolated: each match a piece, and each stretch between matches.
TEST(regex_split, isolates_matches_and_keeps_the_stretches_between) {
  EXPECT_THAT(compiled(R"(\p{N}{1,3})").split("ab12345cd6"),
              ElementsAre("ab", "123", "45", "cd", "6"));
  EXPECT_THAT(compiled("x").split("none here"), ElementsAre("none here"));
  EXPECT_TRUE(compiled("x").split("").empty());
}

// Unicode classes: \p{L} over scripts, \s as Unicode white space (UCP).
TEST(regex_split, knows_unicode_properties) {
  EXPECT_THAT(compiled(R"(\p{L}+|\s+)").split("héllo\u3000日本"),
              ElementsAre("héllo", "\u3000", "日本"));
  EXPECT_THAT(compiled(R"([\x{4e00}-\x{9fa5}]+)").split("a中文b"), ElementsAre("a", "中文", "b"));
}

// An empty match splits nothing, and never stops inside a character.
TEST(regex_split, steps_over_empty_matches) {
  EXPECT_THAT(compiled(R"(\d*)").split("é1é"), ElementsAre("é", "1", "é"));
}

// Bytes that are not UTF-8 never match; they stay in the stretches.
TEST(regex_split, leaves_bytes_that_are_not_utf8_between_matches) {
  EXPECT_THAT(compiled(R"(\p{L}+)").split("ab\xff\xfe" "cd"), ElementsAre("ab", "\xff\xfe", "cd"));
}

// On the patterns the hand-written scanner knows, the same pieces.
TEST(regex_split, agrees_with_the_scanner_on_its_patterns) {
  const std::string text =
    "Hello, world! It's 2024-11-26:  12345 apples\n\n\t naïve 日本語 😀 's 'LL don't   end  ";
  for (auto p : {split_pattern::gpt2, split_pattern::llama3, split_pattern::qwen2}) {
    SCOPED_TRACE(std::string(split_pattern_regex(p)));
    EXPECT_EQ(compiled(split_pattern_regex(p)).split(text), pre_split(text, p));
  }
}

// The behaviors on the example of Hugging Face's documentation of
// SplitDelimiterBehavior, a literal '-' in "the-final--countdown".
TEST(regex_split, joins_or_drops_the_pieces_as_its_behavior_says) {
  auto with = [](split_behavior b, bool invert = false) {
    regex_split::options o;
    o.literal = true;
    o.behavior = b;
    o.invert = invert;
    auto r = regex_split::compile("-", o);
    EXPECT_TRUE(r.has_value());
    return r->split("the-final--countdown");
  };
  using b = split_behavior;
  EXPECT_THAT(with(b::removed), ElementsAre("the", "final", "countdown"));
  EXPECT_THAT(with(b::isolated), ElementsAre("the", "-", "final", "-", "-", "countdown"));
  EXPECT_THAT(with(b::merged_with_previous), ElementsAre("the-", "final-", "-", "countdown"));
  EXPECT_THAT(with(b::merged_with_next), ElementsAre("the", "-final", "-", "-countdown"));
  EXPECT_THAT(with(b::contiguous), ElementsAre("the", "-", "final", "--", "countdown"));
  // invert: the stretches are the matches
  EXPECT_THAT(with(b::removed, true), ElementsAre("-", "-", "-"));
  for (auto behavior : {b::isolated, b::removed, b::merged_with_previous, b::merged_with_next,
                        b::contiguous})
    EXPECT_EQ(split_behavior_of(split_behavior_name(behavior)), behavior);
  EXPECT_FALSE(split_behavior_of("Merged").has_value());
}

// A literal pattern is a string, whatever regex syntax it holds.
TEST(regex_split, finds_a_literal_string_as_it_is) {
  regex_split::options o;
  o.literal = true;
  EXPECT_THAT(regex_split::compile("a.b", o)->split("axb a.b"), ElementsAre("axb ", "a.b"));
}

TEST(regex_split, names_a_regex_that_does_not_compile) {
  auto bad = regex_split::compile("[a-");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("regex '[a-' does not compile at offset 3"));
}

} // namespace
} // namespace kvactor::model
