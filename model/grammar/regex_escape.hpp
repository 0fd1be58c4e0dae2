#pragma once
// regex_escape: the character-level pieces of regex_parser — escapes (\n,
// \xHH, \uXXXX and UTF-16 pairs, \u{...}, \d \w \s ...), which stand for one
// character or a set of them, and the refusal of escapes a mask cannot
// decide (\1, \b, \A, \p{...}).

#include "base/result.hpp"
#include "model/grammar/utf8_ranges.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvactor::model {

// One character (a range of one), or a set of them (\d, \W ...).
struct regex_characters {
  code_point_ranges ranges; // normalized
  bool single = true;
};

inline regex_characters regex_character(uint32_t code_point) {
  return {{{code_point, code_point}}, true};
}

inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_ascii_word(char c) {
  return is_ascii_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The refusal "regex: <what> (at offset <offset>)".
error regex_error(size_t offset, const std::string& what);
// 'c' for printable ASCII, U+XXXX otherwise: for messages.
std::string describe_code_point(uint32_t code_point);

// The escape at pattern[pos] (a '\\'), moving pos past it. In a class, \b
// is a backspace, as in every dialect.
result<regex_characters> parse_escape(std::string_view pattern, size_t& pos, bool in_class);

} // namespace kvactor::model
