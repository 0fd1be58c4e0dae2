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
// line to line.
class raw_string_tracker {
public:
  // Whether `line`, the next one, holds text of a raw string literal.
  bool scan(std::string_view line) {
    size_t i = 0;
    const bool continued = !close_.empty();
    if (continued) {
      const size_t end = line.find(close_);
      if (end == std::string_view::npos)
        return true;
      i = end + close_.size();
      close_.clear();
    }
    return scan_from(line, i) || continued;
  }

private:
  bool scan_from(std::string_view line, size_t i) {
    bool raw = false;
    while (i < line.size()) {
      const char c = line[i];
      if (line.substr(i, 2) == "//")
        return raw;
      if (c == 'R' && line.substr(i + 1, 1) == "\"" && !part_of_name(line, i)) {
        const size_t open = line.find('(', i + 2);
        if (open == std::string_view::npos)
          return raw;
        raw = true;
        const std::string close = ")" + std::string(line.substr(i + 2, open - i - 2)) + "\"";
        const size_t end = line.find(close, open + 1);
        if (end == std::string_view::npos) {
          close_ = close;
          return raw;
        }
        i = end + close.size();
        continue;
      }
      if (c == '"' || (c == '\'' && !digit_separator(line, i))) {
        i = skip_literal(line, i);
        continue;
      }
      ++i;
    }
    return raw;
  }

  static bool part_of_name(std::string_view line, size_t i) {
    if (i == 0)
      return false;
    const char p = line[i - 1];
    // u8R"( and LR"( are raw strings too; fooR"( is not C++.
    return std::isalnum(static_cast<unsigned char>(p)) && p != '8' && p != 'u' && p != 'U' &&
           p != 'L';
  }

  // 1'000'000: a separator, not a character literal.
  static bool digit_separator(std::string_view line, size_t i) {
    return i > 0 && std::isxdigit(static_cast<unsigned char>(line[i - 1])) &&
           i + 1 < line.size() && std::isxdigit(static_cast<unsigned char>(line[i + 1]));
  }

  static size_t skip_literal(std::string_view line, size_t i) {
    const char quote = line[i++];
    while (i < line.size() && line[i] != quote)
      i += line[i] == '\\' ? 2 : 1;
    return i + 1;
  }

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
      continue; // a raw string's text is data, as long as it must be
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
