#include "model/tokenizer/pretokenizer.hpp"

#include <string>

#include <gtest/gtest.h>

#include "model/rng.hpp"

namespace kvactor::model {
namespace {

using pieces = std::vector<std::string>;

pieces split(std::string_view text, split_pattern p) {
  pieces out;
  for (auto s : pre_split(text, p)) out.emplace_back(s);
  return out;
}

TEST(pretokenizer, recognises_the_known_regexes) {
  for (auto p : {split_pattern::gpt2, split_pattern::llama3, split_pattern::qwen2})
    EXPECT_EQ(recognise_split_pattern(split_pattern_regex(p)), p);
  EXPECT_FALSE(recognise_split_pattern(R"(\p{L}+)").has_value());
}

TEST(pretokenizer, llama3_words_spaces_and_contractions) {
  const auto p = split_pattern::llama3;
  EXPECT_EQ(split("Hello world", p), (pieces{"Hello", " world"}));
  EXPECT_EQ(split("I'm here", p), (pieces{"I", "'m", " here"}));
  EXPECT_EQ(split("YOU'RE", p), (pieces{"YOU", "'RE"})); // (?i:...)
  EXPECT_EQ(split("'hello", p), (pieces{"'hello"}));    // [^\r\n\p{L}\p{N}]?\p{L}+
  EXPECT_EQ(split("a  b", p), (pieces{"a", " ", " b"})); // \s+(?!\S) leaves one space
  EXPECT_EQ(split("end   ", p), (pieces{"end", "   "}));
  EXPECT_EQ(split("\tx", p), (pieces{"\tx"}));
}

TEST(pretokenizer, llama3_numbers_and_punctuation) {
  const auto p = split_pattern::llama3;
  EXPECT_EQ(split("12345", p), (pieces{"123", "45"}));
  EXPECT_EQ(split("$100", p), (pieces{"$", "100"}));
  EXPECT_EQ(split("Hi!!! ok", p), (pieces{"Hi", "!!!", " ok"}));
  EXPECT_EQ(split("hi.\n", p), (pieces{"hi", ".\n"}));
  EXPECT_EQ(split("a ... b", p), (pieces{"a", " ...", " b"}));
  EXPECT_EQ(split("x 1", p), (pieces{"x", " ", "1"}));
}

TEST(pretokenizer, llama3_newlines) {
  const auto p = split_pattern::llama3;
  EXPECT_EQ(split("hello\n\nworld", p), (pieces{"hello", "\n\n", "world"}));
  // \s*[\r\n]+ ends after the last newline of the run; the rest leads "y".
  EXPECT_EQ(split("x \n  y", p), (pieces{"x", " \n", " ", " y"}));
  EXPECT_EQ(split("a\r\n", p), (pieces{"a", "\r\n"}));
}

TEST(pretokenizer, qwen2_splits_digits_one_by_one) {
  EXPECT_EQ(split("x2024", split_pattern::qwen2), (pieces{"x", "2", "0", "2", "4"}));
}

TEST(pretokenizer, digits) {
  EXPECT_EQ(split("ab12 3x\u0663", split_pattern::individual_digits),
            (pieces{"ab", "1", "2", " ", "3", "x", "\u0663"}));
  EXPECT_EQ(split("ab12 3x\u0663", split_pattern::digit_runs),
            (pieces{"ab", "12", " ", "3", "x", "\u0663"}));
}

TEST(pretokenizer, gpt2_rules) {
  const auto p = split_pattern::gpt2;
  EXPECT_EQ(split("Hello  world", p), (pieces{"Hello", " ", " world"}));
  EXPECT_EQ(split("I'M", p), (pieces{"I", "'", "M"})); // case-sensitive contractions
  EXPECT_EQ(split("it's 12345!", p), (pieces{"it", "'s", " 12345", "!"}));
  EXPECT_EQ(split("\n\nx", p), (pieces{"\n", "\n", "x"}));
}

TEST(pretokenizer, unicode_letters_and_numbers) {
  const auto p = split_pattern::llama3;
  EXPECT_EQ(split("café naïve", p), (pieces{"café", " naïve"}));
  EXPECT_EQ(split("日本語のテキスト", p), (pieces{"日本語のテキスト"}));
  EXPECT_EQ(split("Привет, мир", p), (pieces{"Привет", ",", " мир"}));
  // Arabic-Indic digits are \p{N}
  EXPECT_EQ(split("x\u0663\u0664", p), (pieces{"x", "\u0663\u0664"}));
  EXPECT_EQ(split("a\u3000b", p), (pieces{"a", "\u3000b"})); // ideographic space is \s, not \r\n
  EXPECT_EQ(split("ok 🙂🙂", p), (pieces{"ok", " 🙂🙂"}));
}

TEST(pretokenizer, pieces_cover_any_input_exactly) {
  rng r(42);
  const std::string alphabet[] = {"a",    "Z",        " ",      "  ",     "\n",    "\r\n", "\t",
                                  "7",    "'",        "'s",     "!",      "é",     "日",   "🙂",
                                  "\xff", "\xe2\x82", "\u00a0", "\u2009", "\u0663"};
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    const int n = static_cast<int>(r.next() % 20);
    for (int i = 0; i < n; ++i) text += alphabet[r.next() % std::size(alphabet)];
    for (auto p : {split_pattern::gpt2, split_pattern::llama3, split_pattern::qwen2,
                   split_pattern::individual_digits, split_pattern::digit_runs}) {
      std::string joined;
      for (auto s : pre_split(text, p)) {
        ASSERT_FALSE(s.empty());
        joined += s;
      }
      ASSERT_EQ(joined, text);
    }
  }
}

} // namespace
} // namespace kvactor::model
