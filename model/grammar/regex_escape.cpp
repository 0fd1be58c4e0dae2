#include "model/grammar/regex_escape.hpp"

#include "base/utf8.hpp"

#include <cstdio>
#include <optional>

namespace kvactor::model {

namespace {

constexpr uint32_t surrogate_lo = 0xD800, surrogate_hi = 0xDFFF, low_surrogate_lo = 0xDC00;

// \d \w \s and their complements, with their ASCII meanings.
code_point_ranges shorthand(char c) {
  code_point_ranges r;
  if (c == 'd' || c == 'D')
    r = {{'0', '9'}};
  else if (c == 'w' || c == 'W')
    r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
  else
    r = {{'\t', '\r'}, {' ', ' '}}; // \t \n \v \f \r are 9..13
  r = normalize_code_points(std::move(r));
  return c >= 'a' ? r : complement_code_points(r);
}

int hex_value(char c) {
  if (is_ascii_digit(c)) return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

class escape_reader {
public:
  escape_reader(std::string_view pattern, size_t& pos) : p_(pattern), pos_(pos) {}

  result<regex_characters> read(bool in_class) {
    const size_t at = pos_++;
    if (at_end()) return regex_error(at, "a '\\' at the end of the pattern");
    const char c = p_[pos_++];
    std::string text = "\\";
    text += c;
    switch (c) {
    case 'n': return regex_character('\n');
    case 'r': return regex_character('\r');
    case 't': return regex_character('\t');
    case 'f': return regex_character('\f');
    case 'v': return regex_character('\v');
    case '0':
      if (!at_end() && is_ascii_digit(p_[pos_]))
        return regex_error(at, std::string("an octal escape \\0") += p_[pos_]);
      return regex_character(0);
    case 'b':
      if (in_class) return regex_character('\b');
      return regex_error(at, "a word boundary \\b");
    case 'B': return regex_error(at, "a word boundary \\B");
    case 'k': return regex_error(at, "a backreference \\k<name>");
    case 'p':
    case 'P': return regex_error(at, "a Unicode property class " + text);
    default: break;
    }
    if (c == 'x' || c == 'u') return hex(at, c);
    if (std::string_view("dDwWsS").find(c) != std::string_view::npos)
      return regex_characters{shorthand(c), false};
    if (std::string_view("AzZG").find(c) != std::string_view::npos)
      return regex_error(at, "an anchor " + text);
    if (is_ascii_digit(c)) return regex_error(at, "a backreference " + text);
    if (is_ascii_word(c)) return regex_error(at, "an unknown escape " + text);
    --pos_; // an escaped metacharacter or any other symbol: itself
    const utf8_char ch = decode_utf8(p_, pos_);
    pos_ += ch.length;
    return regex_character(ch.code_point);
  }

private:
  bool at_end() const { return pos_ >= p_.size(); }
  bool next_is(char c, size_t ahead = 0) const {
    return pos_ + ahead < p_.size() && p_[pos_ + ahead] == c;
  }

  std::optional<uint32_t> digits(size_t n) {
    uint32_t value = 0;
    for (size_t k = 0; k < n; ++k, ++pos_) {
      if (at_end() || hex_value(p_[pos_]) < 0) return std::nullopt;
      value = value << 4 | static_cast<uint32_t>(hex_value(p_[pos_]));
    }
    return value;
  }

  // \xHH, \uHHHH (a UTF-16 surrogate pair as two), \x{H...}, \u{H...}.
  result<regex_characters> hex(size_t at, char kind) {
    std::optional<uint32_t> cp;
    if (next_is('{')) {
      const size_t close = p_.find('}', pos_);
      const size_t n = close == std::string_view::npos ? 0 : close - pos_ - 1;
      ++pos_;
      cp = n >= 1 && n <= 6 ? digits(n) : std::nullopt;
      ++pos_;
    } else {
      cp = digits(kind == 'x' ? 2 : 4);
      if (cp && *cp >= surrogate_lo && *cp < low_surrogate_lo && next_is('\\') && next_is('u', 1)) {
        const size_t low_at = pos_;
        pos_ += 2;
        const std::optional<uint32_t> low = digits(4);
        if (low && *low >= low_surrogate_lo && *low <= surrogate_hi)
          cp = 0x10000 + ((*cp - surrogate_lo) << 10) + (*low - low_surrogate_lo);
        else
          pos_ = low_at;
      }
    }
    if (!cp) return regex_error(at, std::string("a malformed escape \\") + kind);
    if (*cp >= surrogate_lo && *cp <= surrogate_hi)
      return regex_error(at, "a lone surrogate " + describe_code_point(*cp));
    if (*cp > max_code_point) return regex_error(at, "a code point past U+10FFFF");
    return regex_character(*cp);
  }

  std::string_view p_;
  size_t& pos_;
};

} // namespace

error regex_error(size_t offset, const std::string& what) {
  return error_in("regex", what + " (at offset " + std::to_string(offset) + ")");
}

std::string describe_code_point(uint32_t code_point) {
  if (code_point > 0x20 && code_point < 0x7F)
    return std::string("'") + static_cast<char>(code_point) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "U+%04X", code_point);
  return hex;
}

result<regex_characters> parse_escape(std::string_view pattern, size_t& pos, bool in_class) {
  return escape_reader(pattern, pos).read(in_class);
}

} // namespace kvactor::model
