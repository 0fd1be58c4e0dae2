#include "tools/format/format_rules.hpp"

#include <cctype>
#include <regex>

namespace kvactor::tools {

namespace {

// UTF-8 code points: every byte but the continuation bytes 10xxxxxx.
int32_t columns(std::string_view line) {
  int32_t n = 0;
  for (unsigned char c : line)
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// Follows string and character literals, comments and raw strings from
// line to line, to tell which lines hold raw-string text.
class raw_string_tracker {
public:
  // Whether `line`, the next one, holds text of a raw string literal.
  bool scan(std::string_view line) {
    size_t i = 0;
    bool raw = false;
    while (i < line.size()) {
      if (in_comment_) { // a /* */ comment, maybe from an earlier line
        const size_t end = line.find("*/", i);
        if (end == std::string_view::npos)
          return raw;
        in_comment_ = false;
        i = end + 2;
      } else if (!close_.empty()) { // a raw string, maybe from an earlier line
        raw = true;
        const size_t end = line.find(close_, i);
        if (end == std::string_view::npos)
          return raw;
        i = end + close_.size();
        close_.clear();
      } else if (line.substr(i, 2) == "//") {
        return raw;
      } else if (line.substr(i, 2) == "/*") {
        in_comment_ = true;
        i += 2;
      } else if (line[i] == 'R' && line.substr(i + 1, 1) == "\"" && !part_of_name(line, i)) {
        const size_t open = line.find('(', i + 2);
        if (open == std::string_view::npos)
          return raw;
        close_ = ")" + std::string(line.substr(i + 2, open - i - 2)) + "\"";
        raw = true;
        i = open + 1;
      } else if (line[i] == '"' || (line[i] == '\'' && !digit_separator(line, i))) {
        i = skip_literal(line, i);
      } else {
        ++i;
      }
    }
    return raw;
  }

private:
  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  // R"( opens a raw string alone or after an encoding prefix (u8R, uR, UR,
  // LR); fooR"( is no raw string.
  static bool part_of_name(std::string_view line, size_t i) {
    size_t start = i;
    while (start > 0 && word_char(line[start - 1]))
      --start;
    const std::string_view prefix = line.substr(start, i - start);
    return !(prefix.empty() || prefix == "u8" || prefix == "u" || prefix == "U" || prefix == "L");
  }

  // 1'000'000 and 0x0'ff: a separator within a number, not a character
  // literal (u8'a' and case'a' are literals: their words start with no digit).
  static bool digit_separator(std::string_view line, size_t i) {
    if (i + 1 >= line.size() || !std::isxdigit(static_cast<unsigned char>(line[i + 1])))
      return false;
    size_t start = i;
    while (start > 0 && (word_char(line[start - 1]) || line[start - 1] == '\''))
      --start;
    return start < i && std::isdigit(static_cast<unsigned char>(line[start]));
  }

  static size_t skip_literal(std::string_view line, size_t i) {
    const char quote = line[i++];
    while (i < line.size() && line[i] != quote)
      i += line[i] == '\\' ? 2 : 1;
    return i + 1;
  }

  bool in_comment_ = false;
  std::string close_; // while inside a raw string: its closing sequence
};

} // namespace

std::vector<format_issue> check_format(std::string_view text) {
  static const std::regex std_int(R"(std::u?int(8|16|32|64)_t\b)");
  static const std::regex triple_slash(R"(^\s*///)");
  std::vector<format_issue> issues;
  raw_string_tracker raw;
  int32_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++number;
    if (raw.scan(line))
      continue; // a line with raw-string text holds data, as long as it must be
    const std::string s(line);
    if (columns(line) > max_line_columns)
      issues.push_back({number, "over " + std::to_string(max_line_columns) + " columns (" +
                                  std::to_string(columns(line)) + ")"});
    if (s.find('\t') != std::string::npos)
      issues.push_back({number, "a tab"});
    if (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
      issues.push_back({number, "a trailing blank"});
    if (std::regex_search(s, triple_slash))
      issues.push_back({number, "a /// comment (comments take //)"});
    if (std::regex_search(s, std_int))
      issues.push_back({number, "std:: before an intN_t (written without it)"});
  }
  return issues;
}

} // namespace kvactor::tools
