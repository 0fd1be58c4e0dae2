#include "model/grammar/regex_grammar.hpp"

#include "base/utf8.hpp"
#include "tests/model/grammar/grammar_walk.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const grammar> compiled(std::string_view pattern) {
  result<grammar> g = regex_grammar(pattern);
  EXPECT_TRUE(g.has_value()) << pattern << ": " << (g ? "" : g.error().message);
  return g ? std::make_shared<const grammar>(std::move(*g)) : nullptr;
}

std::string refusal(std::string_view pattern, const regex_options& options = {}) {
  grammar_builder b;
  result<grammar_element> r = add_regex(b, pattern, options);
  EXPECT_FALSE(r.has_value()) << pattern << " was not refused";
  return r ? "" : r.error().message;
}

// `s` with bytes outside printable ASCII as \xHH, for failure messages.
std::string shown(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<uint8_t>(c);
    if (b >= 0x20 && b < 0x7F) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", b);
      out += hex;
    }
  }
  return out;
}

// PCRE2's whole-string match of a pattern: UTF, anchored at both ends, and
// '\n' the only newline (what the dot leaves out).
class pcre_full_match {
public:
  explicit pcre_full_match(const std::string& pattern) {
    pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
    pcre2_set_newline(context, PCRE2_NEWLINE_LF);
    int code = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                          PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &code, &offset, context);
    pcre2_compile_context_free(context);
    if (code_ == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(code, message, sizeof message);
      error_ = reinterpret_cast<const char*>(message);
      return;
    }
    data_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~pcre_full_match() {
    pcre2_match_data_free(data_);
    pcre2_code_free(code_);
  }
  pcre_full_match(const pcre_full_match&) = delete;
  pcre_full_match& operator=(const pcre_full_match&) = delete;

  const std::string& error() const { return error_; }
  // Whether `text` (valid UTF-8) matches; nullopt when PCRE2 gave up.
  std::optional<bool> matches(std::string_view text) const {
    const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0,
                               data_, nullptr);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) return std::nullopt;
    return rc >= 0;
  }

private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* data_ = nullptr;
  std::string error_;
};

// A pattern in PCRE2's spelling: \uXXXX and \u{...} as \x{...}, and \v (a
// vertical tab here, any vertical space in PCRE2) as \x{0b}.
std::string to_pcre(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == 'v') {
      out += "\\x{0b}";
    } else if (c == 'u' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += "\\x";
    } else if (c == 'u') {
      out += "\\x{" + std::string(pattern.substr(i + 1, 4)) + "}";
      i += 4;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

// Every construct regex_grammar.hpp supports, alone and mixed.
const std::vector<std::string_view> corpus = {
  R"([a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,4})",
  R"(\d{4}-\d{2}-\d{2})",
  R"((19|20)\d\d[- /.](0[1-9]|1[012])[- /.](0[1-9]|[12][0-9]|3[01]))",
  R"(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)",
  R"(\(?\d{3}\)?[-. ]?\d{3}[-. ]?\d{4})",
  R"(\+?[1-9]\d{1,14})",
  R"(((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d))",
  R"([0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})",
  R"(^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$)",
  R"(cat|dog|bird|)",
  R"((a|b|c)*abb)",
  R"(((ab|c)(d|e))+)",
  R"((?:x(?:y(?:z)?)?)?)",
  R"((?P<year>\d{4})-(?<month>\d\d))",
  R"(a{3}b{2,}(ab){1,3}x{0,2}y{2,4})",
  R"(a+?b*?c??d{1,2}?e{2}?)",
  R"([^a-c]+)",
  R"([α-ω]+|[^α-ω\d]*x)",
  R"(.{1,5})",
  R"(a.b|.)",
  R"(caf\u00e9|na\u{ef}ve)",
  R"(\x41\x{3b1}+[\x{1F600}-\x{1F64F}])",
  R"([\w\s]+|\W\S\D|[^\W\d]+)",
  R"([\n\r\t\f\v]+\0a)",
  R"(\\\.\/\*\+\?\(\)\[\]\{\}\|\^\$\-)",
  R"([]a]+[^]a][-a][a-]x]y})",
  R"([\]\-\\^]+a{b)",
  R"(😀+|日本語|[\u00e9-\u{1F600}])",
  R"([^"\\]*)",
  R"(\S+\s\S+)",
  R"((\d+(,\d{3})*|\d*)(\.\d+)?)",
  R"((a?)*)",
  R"((a|)*b)",
  R"((x*)+y)",
  R"((a?b?)*c)",
  R"(((a?)(b*)){2,3}c)",
  R"((|a|bc?)+d)",
  R"(((a?)?)*(b*)*)",
  R"((a?){3}|(b|c?){2,}d)",
  R"((a??b*?)+?(c{0})*)",
  R"(^$)",
};

// Random sentences of every pattern's grammar are matches in PCRE2.
TEST(regex_grammar, sentences_fully_match_in_pcre2) {
  std::mt19937_64 rng(20240611);
  for (std::string_view pattern : corpus) {
    SCOPED_TRACE(pattern);
    const auto g = compiled(pattern);
    ASSERT_NE(g, nullptr);
    const pcre_full_match pcre(to_pcre(pattern));
    ASSERT_EQ(pcre.error(), "");
    for (int k = 0; k < 200; ++k) {
      const std::optional<std::string> s = testing::random_sentence(g, rng, 40);
      ASSERT_TRUE(s.has_value());
      ASSERT_TRUE(is_valid_utf8(*s)) << shown(*s);
      EXPECT_EQ(pcre.matches(*s), true) << shown(*s);
    }
  }
}

// The characters of `s`, each as its bytes.
std::vector<std::string> characters_of(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const utf8_char c = decode_utf8(s, i);
    out.emplace_back(s.substr(i, c.length));
    i += c.length;
  }
  return out;
}

// Strings near the language: random runs of its characters (and a few
// others, and stray bytes), and sentences with a byte or a character
// inserted, removed or replaced.
std::vector<std::string> probes(const std::shared_ptr<const grammar>& g, std::mt19937_64& rng) {
  std::vector<std::string> sentences, pieces = {"a", "0", "\n", "\"", "é", "\xff", "\xc3"};
  for (int k = 0; k < 20; ++k)
    if (std::optional<std::string> s = testing::random_sentence(g, rng, 24)) {
      sentences.push_back(*s);
      for (std::string& c : characters_of(*s)) pieces.push_back(std::move(c));
    }
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::vector<std::string> out;
  for (int k = 0; k < 100; ++k) {
    std::string s;
    for (size_t n = pick(9); n > 0; --n) s += pieces[pick(pieces.size())];
    out.push_back(std::move(s));
  }
  for (int k = 0; k < 100 && !sentences.empty(); ++k) {
    std::string s = sentences[pick(sentences.size())];
    const std::string& piece = pieces[pick(pieces.size())];
    const char byte = piece[pick(piece.size())];
    const size_t at = pick(s.size() + 1);
    switch (pick(4)) {
    case 0: s.insert(at, 1, byte); break;
    case 1: s.insert(at, piece); break;
    case 2:
      if (at < s.size()) s.erase(at, 1);
      break;
    default:
      if (at < s.size()) s[at] = byte;
      break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Near the language, the grammar accepts exactly what PCRE2 matches, and
// never bytes that are not UTF-8.
TEST(regex_grammar, accepts_exactly_what_pcre2_matches) {
  std::mt19937_64 rng(99);
  int num_matched = 0, num_refused = 0, num_invalid = 0;
  for (std::string_view pattern : corpus) {
    SCOPED_TRACE(pattern);
    const auto g = compiled(pattern);
    ASSERT_NE(g, nullptr);
    const pcre_full_match pcre(to_pcre(pattern));
    ASSERT_EQ(pcre.error(), "");
    for (const std::string& s : probes(g, rng)) {
      const bool accepted = testing::accepts(g, s);
      if (!is_valid_utf8(s)) {
        EXPECT_FALSE(accepted) << shown(s);
        ++num_invalid;
        continue;
      }
      const std::optional<bool> matched = pcre.matches(s);
      ASSERT_TRUE(matched.has_value()) << "PCRE2 gave up on " << shown(s);
      EXPECT_EQ(accepted, *matched) << shown(s);
      ++(*matched ? num_matched : num_refused);
    }
  }
  // NOTE: the probes must land on both sides, or the test shows nothing.
  EXPECT_GT(num_matched, 1500);
  EXPECT_GT(num_refused, 1500);
  EXPECT_GT(num_invalid, 100);
}

// Escapes whose meaning PCRE2 spells differently.
TEST(regex_grammar, knows_escapes_of_other_dialects) {
  EXPECT_TRUE(testing::accepts(compiled(R"(\v)"), "\x0b"));
  EXPECT_TRUE(testing::accepts(compiled(R"([\b])"), "\x08"));
  EXPECT_TRUE(testing::accepts(compiled(R"(\uD83D\uDE00)"), "😀"));
  EXPECT_TRUE(testing::accepts(compiled(R"([\uD83D\uDE00-\uD83D\uDE4F]+)"), "😀🙏"));
  EXPECT_TRUE(testing::accepts(compiled(R"(a\$)"), "a$"));
  EXPECT_TRUE(testing::accepts(compiled(R"(^abc$)"), "abc"));
}

// Repetitions of what may be empty build (no left recursion) and match.
TEST(regex_grammar, repeats_groups_that_may_be_empty) {
  const auto star = compiled("(a?)*");
  for (std::string_view s : {"", "a", "aaaa"}) EXPECT_TRUE(testing::accepts(star, s)) << s;
  EXPECT_FALSE(testing::accepts(star, "b"));
  const auto plus = compiled("(x*|y)+z");
  for (std::string_view s : {"z", "xz", "yxxyz", "yyz"})
    EXPECT_TRUE(testing::accepts(plus, s)) << s;
  EXPECT_FALSE(testing::accepts(plus, "zx"));
  EXPECT_TRUE(testing::accepts(compiled("(()*)*"), ""));
}

TEST(regex_grammar, counts_up_to_the_limit) {
  const auto g = compiled("a{10000}");
  EXPECT_TRUE(testing::accepts(g, std::string(10000, 'a')));
  EXPECT_FALSE(testing::accepts(g, std::string(9999, 'a')));
  EXPECT_FALSE(testing::accepts(g, std::string(10001, 'a')));
  EXPECT_THAT(refusal("a{10001}"), HasSubstr("10000"));
  EXPECT_THAT(refusal("(ab){2,99999999999999999999}"), HasSubstr("10000"));
  std::string many;
  for (int k = 0; k < 11; ++k) many += "a{0,10000}";
  EXPECT_THAT(refusal(many), HasSubstr("counts adding up to over 100000"));
}

// Each construct a mask cannot decide, and each malformed pattern, is
// refused naming it and where it stands.
TEST(regex_grammar, refuses_naming_the_construct) {
  const std::vector<std::pair<std::string, std::string_view>> cases = {
    {R"((a)\1)", "backreference \\1"},
    {R"((?P<n>a)(?P=n))", "backreference (?P="},
    {R"((?<n>a)\k<n>)", "backreference \\k"},
    {R"(a(?=b))", "lookahead (?="},
    {R"(a(?!b))", "lookahead (?!"},
    {R"((?<=a)b)", "lookbehind (?<="},
    {R"((?<!a)b)", "lookbehind (?<!"},
    {R"(a^b)", "anchor '^'"},
    {R"(a$b)", "anchor '$'"},
    {R"((^a))", "anchor '^'"},
    {R"(\Aa)", "anchor \\A"},
    {R"(a\z)", "anchor \\z"},
    {R"(\bword)", "word boundary \\b"},
    {R"(a\B)", "word boundary \\B"},
    {R"((?i)abc)", "inline flags (?i"},
    {R"((?i:abc))", "inline flags (?i"},
    {R"((?-s)a)", "inline flags (?-"},
    {R"((ab)", "unbalanced '('"},
    {R"(ab))", "unbalanced ')'"},
    {R"([z-a])", "range z-a"},
    {R"([\d-z])", "range \\d-z"},
    {R"(*a)", "quantifier '*' with nothing before it"},
    {R"(a|+b)", "quantifier '+' with nothing before it"},
    {R"((?:?))", "quantifier '?' with nothing before it"},
    {R"({2}a)", "quantifier '{' with nothing before it"},
    {R"(^*)", "quantifier '*' with nothing before it"},
    {R"(a{3,2})", "{3,2} whose minimum is over its maximum"},
    {R"(a{,2})", "{,2} without a minimum"},
    {R"(a**)", "quantifier '*' right after another"},
    {R"(a{2}{3})", "quantifier '{' right after another"},
    {R"(a*+)", "possessive"},
    {R"((?>a))", "atomic group"},
    {R"([abc)", "unterminated class"},
    {R"([[:alpha:]])", "POSIX class"},
    {R"(\p{L})", "Unicode property class \\p"},
    {R"(\q)", "unknown escape \\q"},
    {R"(ab\)", "'\\' at the end"},
    {R"(\x4)", "malformed escape \\x"},
    {R"(\u{110000})", "past U+10FFFF"},
    {R"(\uD800)", "lone surrogate U+D800"},
    {R"(\01)", "octal escape"},
    {"a\xff", "not UTF-8"},
    {R"((?<1st>a))", "group name"},
    {std::string(300, '(') + "a" + std::string(300, ')'), "nested deeper than 256"},
  };
  for (auto [pattern, construct] : cases) {
    const std::string message = refusal(pattern);
    EXPECT_THAT(message, HasSubstr(construct)) << pattern;
    EXPECT_THAT(message, ::testing::StartsWith("regex: ")) << pattern;
    EXPECT_THAT(message, HasSubstr("at offset")) << pattern;
  }
  EXPECT_THAT(refusal("ab(?=c)"), HasSubstr("offset 2"));
  EXPECT_THAT(refusal("ab[z-a]"), HasSubstr("offset 3"));
  // A class of no character: nothing finite matches past "a".
  result<grammar> empty = regex_grammar(R"(a[^\s\S])");
  ASSERT_FALSE(empty.has_value());
  EXPECT_THAT(empty.error().message, HasSubstr("matches no finite text"));
}

constexpr regex_options json_string{.json_string_characters = true};

// A schema's "pattern": between the quotes of a JSON string.
std::shared_ptr<const grammar> json_string_grammar(std::string_view pattern) {
  grammar_builder b;
  result<grammar_element> inner = add_regex(b, pattern, json_string);
  EXPECT_TRUE(inner.has_value()) << pattern << ": " << (inner ? "" : inner.error().message);
  if (!inner) return nullptr;
  const uint32_t root = b.rule("string");
  b.define(root, {{b.byte('"'), *inner, b.byte('"')}});
  result<grammar> g = b.build(root);
  EXPECT_TRUE(g.has_value());
  return g ? std::make_shared<const grammar>(std::move(*g)) : nullptr;
}

// Classes, the dot and the shorthands leave out what JSON must escape.
TEST(regex_grammar, json_string_characters_need_no_escaping) {
  std::mt19937_64 rng(5);
  for (std::string_view pattern : {"[^a]+", ".*", R"(\D\W\S+)", R"([\x00-\x{10FFFF}]+)"}) {
    SCOPED_TRACE(pattern);
    const auto g = json_string_grammar(pattern);
    ASSERT_NE(g, nullptr);
    for (int k = 0; k < 300; ++k) {
      const std::optional<std::string> s = testing::random_sentence(g, rng, 60, 0.05);
      ASSERT_TRUE(s.has_value());
      const std::string_view inside = std::string_view(*s).substr(1, s->size() - 2);
      for (char c : inside)
        ASSERT_TRUE(c != '"' && c != '\\' && static_cast<uint8_t>(c) >= 0x20) << shown(*s);
    }
  }
  const auto g = json_string_grammar("[^a]");
  for (std::string_view s : {"\"b\"", "\"é\"", "\" \"", "\"\x7f\""})
    EXPECT_TRUE(testing::accepts(g, s)) << shown(s);
  for (std::string_view s : {"\"a\"", "\"\"\"", "\"\\\"", "\"\n\"", "\"\x1f\""})
    EXPECT_FALSE(testing::accepts(g, s)) << shown(s);
  EXPECT_TRUE(testing::accepts(json_string_grammar(R"([a"\\]+)"), "\"aa\""));
  EXPECT_TRUE(testing::accepts(compiled("[^a]"), "\""));
}

TEST(regex_grammar, json_string_characters_refuse_literals_to_escape) {
  EXPECT_THAT(refusal(R"(a"b)", json_string), HasSubstr("character '\"'"));
  EXPECT_THAT(refusal(R"(a"b)", json_string), HasSubstr("escaping in a JSON string"));
  EXPECT_THAT(refusal(R"(a\\b)", json_string), HasSubstr("character '\\'"));
  EXPECT_THAT(refusal(R"(a\nb)", json_string), HasSubstr("U+000A"));
  EXPECT_THAT(refusal(R"(\x00)", json_string), HasSubstr("U+0000"));
  EXPECT_THAT(refusal(R"(["\\])", json_string), HasSubstr("only characters"));
}

} // namespace
} // namespace kvactor::model
