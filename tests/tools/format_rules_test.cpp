// The format rules (tools/format/format_rules.cpp): each catches its fault
// and names the line; the lines of raw strings are data, exempt.

#include "tools/format/format_rules.hpp"

#include <gtest/gtest.h>

namespace kvactor::tools {
namespace {

std::vector<int32_t> lines_of(const std::vector<format_issue>& issues) {
  std::vector<int32_t> out;
  for (const auto& i : issues)
    out.push_back(i.line);
  return out;
}

std::string columns_of(int n) {
  return std::string(static_cast<size_t>(n), 'x');
}

TEST(format_rules, a_clean_text_has_no_issue) {
  EXPECT_TRUE(check_format("int32_t a = 1; // fine\n\nint b;\n").empty());
  EXPECT_TRUE(check_format("").empty());
}

TEST(format_rules, lines_over_100_columns_counting_code_points) {
  const std::string at_limit = "// " + columns_of(97);
  const std::string over = "// " + columns_of(98);
  // 100 two-byte characters: 200 bytes, 100 columns.
  std::string wide;
  for (int i = 0; i < 100; ++i)
    wide += "\xc3\xa9";
  const auto issues = check_format(at_limit + "\n" + over + "\n" + wide + "\n");
  ASSERT_EQ(lines_of(issues), (std::vector<int32_t>{2}));
  EXPECT_EQ(issues[0].what, "over 100 columns (101)");
}

TEST(format_rules, tabs_trailing_blanks_triple_slashes_and_std_ints) {
  const std::string text = "int a;\t// tab\n"
                           "int b; \n"
                           "  /// doc\n"
                           "std::"
                           "uint64_t c;\n"
                           "int d; /// after code: not a comment style of its own\n";
  const auto issues = check_format(text);
  EXPECT_EQ(lines_of(issues), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(format_rules, raw_string_text_may_be_long_but_code_around_it_may_not) {
  const std::string long_text = columns_of(120);
  const std::string text = "auto j = R\"(" + long_text + ")\";\n" // one line
                           "auto k = R\"json(\n" +
                           long_text + "\n" + // inside
                           ")json\"; \t" + "\n" + // its close, whose line is data too
                           "// " + long_text + "\n" + // after it: code again
                           "auto q = \"R\\\"(\"; // " + long_text + "\n"; // not a raw string
  const auto issues = check_format(text);
  EXPECT_EQ(lines_of(issues), (std::vector<int32_t>{5, 6}));
}

TEST(format_rules, digit_separators_and_quotes_in_literals_do_not_open_raw_strings) {
  const std::string text = "int64_t n = 1'000'000; auto c = '\"';\n"
                           "auto s = \"R\\\"(\";\n"
                           "// " + columns_of(120) + "\n";
  EXPECT_EQ(lines_of(check_format(text)), (std::vector<int32_t>{3}));
}

TEST(format_rules, comments_and_character_literals_hide_no_raw_string) {
  const std::string long_line = "// " + columns_of(120) + "\n";
  const std::string text = "/* R\"x( in a comment\n" // a comment across lines
                           "still R\"y( a comment */ int a;\n" +
                           long_line +                  // 3
                           "int b; /* don't */ auto s = R\"(" + columns_of(120) + ")\";\n" +
                           "auto c = u8'a'; auto t = R\"(" + columns_of(120) + ")\";\n" +
                           long_line;                   // 6
  EXPECT_EQ(lines_of(check_format(text)), (std::vector<int32_t>{3, 6}));
}

} // namespace
} // namespace kvactor::tools
