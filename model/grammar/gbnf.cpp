#include "model/grammar/gbnf.hpp"

#include "base/utf8.hpp"

#include <cctype>
#include <optional>

namespace kvactor::model {

namespace {

using ranges = std::vector<std::pair<uint32_t, uint32_t>>;

class gbnf_parser {
public:
  explicit gbnf_parser(std::string_view text) : text_(text) {}

  result<grammar> parse() {
    skip_space();
    if (at_end()) return fail("the grammar is empty");
    while (!at_end()) {
      const size_t start = pos_;
      std::string name = read_name();
      skip_space();
      if (name.empty() || !text_.substr(pos_).starts_with("::="))
        return fail_at(start, "expected a rule definition 'name ::= ...'");
      pos_ += 3;
      const uint32_t r = b_.rule(name);
      if (b_.is_defined(r)) return fail_at(start, "rule '" + name + "' is defined twice");
      auto alternatives = parse_alternatives(false);
      if (!alternatives) return alternatives.error();
      b_.define(r, std::move(*alternatives));
    }
    if (!defined("root")) return error_in("grammar", "no rule 'root' (the grammar's start)");
    return b_.build(b_.rule("root"));
  }

private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool defined(std::string_view name) {
    const uint32_t r = b_.rule(name);
    return b_.is_defined(r);
  }

  static bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  }

  void skip_space() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(peek())))
        ++pos_;
      else if (peek() == '#')
        while (!at_end() && peek() != '\n') ++pos_;
      else
        break;
    }
  }

  std::string read_name() {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // Whether a new definition starts here (`name ::=`).
  bool at_definition() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p).starts_with("::=");
  }

  result<std::vector<grammar_sequence>> parse_alternatives(bool nested) {
    std::vector<grammar_sequence> alternatives(1);
    while (true) {
      skip_space();
      if (at_end() || (!nested && at_definition())) break;
      const char c = peek();
      if (c == '|') {
        ++pos_;
        alternatives.emplace_back();
        continue;
      }
      if (c == ')') {
        if (!nested) return fail("')' without its '('");
        break;
      }
      auto item = parse_item();
      if (!item) return item.error();
      auto repeated = parse_postfix(std::move(*item));
      if (!repeated) return repeated.error();
      auto& seq = alternatives.back();
      seq.insert(seq.end(), repeated->begin(), repeated->end());
    }
    return alternatives;
  }

  result<grammar_sequence> parse_item() {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      grammar_sequence seq;
      while (peek() != '"') {
        if (at_end()) return fail("a literal without its closing '\"'");
        auto cp = read_char();
        if (!cp) return cp.error();
        std::string bytes;
        append_utf8(bytes, *cp);
        const grammar_sequence lit = b_.literal(bytes);
        seq.insert(seq.end(), lit.begin(), lit.end());
      }
      ++pos_;
      return seq;
    }
    if (c == '[') {
      ++pos_;
      const bool negated = peek() == '^';
      if (negated) ++pos_;
      ranges set;
      while (peek() != ']') {
        if (at_end()) return fail("a class without its closing ']'");
        auto lo = read_char();
        if (!lo) return lo.error();
        uint32_t hi = *lo;
        if (peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
          ++pos_;
          auto end = read_char();
          if (!end) return end.error();
          if (*end < *lo) return fail("a range whose end comes before its start");
          hi = *end;
        }
        set.push_back({*lo, hi});
      }
      ++pos_;
      return grammar_sequence{b_.characters(std::move(set), negated)};
    }
    if (c == '.') {
      ++pos_;
      return grammar_sequence{b_.characters({}, true)};
    }
    if (c == '(') {
      ++pos_;
      auto alternatives = parse_alternatives(true);
      if (!alternatives) return alternatives.error();
      if (peek() != ')') return fail("a group without its closing ')'");
      ++pos_;
      return grammar_sequence{b_.any_of("group", std::move(*alternatives))};
    }
    if (is_name_char(c)) return grammar_sequence{grammar_builder::ref(b_.rule(read_name()))};
    return fail(std::string("unexpected '") + c + "'");
  }

  result<grammar_sequence> parse_postfix(grammar_sequence item) {
    const char c = peek();
    int64_t min = 1, max = 1;
    if (c == '*' || c == '+' || c == '?') {
      ++pos_;
      min = c == '+' ? 1 : 0;
      max = c == '?' ? 1 : -1;
    } else if (c == '{') {
      ++pos_;
      auto lo = read_count();
      if (!lo) return fail("'{' without a count");
      min = max = *lo;
      if (peek() == ',') {
        ++pos_;
        auto hi = read_count();
        max = hi ? *hi : -1;
      }
      if (peek() != '}') return fail("a repetition without its closing '}'");
      ++pos_;
      if (max >= 0 && max < min) return fail("a repetition {m,n} with n < m");
    } else {
      return item;
    }
    auto repeated = b_.repeat(item, min, max);
    if (!repeated) return fail(repeated.error().message);
    return grammar_sequence{*repeated};
  }

  std::optional<int64_t> read_count() {
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return std::nullopt;
    int64_t n = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      n = std::min<int64_t>(n * 10 + (peek() - '0'), int64_t{1} << 40);
      ++pos_;
    }
    return n;
  }

  // One character of a literal or class, escapes decoded.
  result<uint32_t> read_char() {
    if (peek() != '\\') {
      const utf8_char c = decode_utf8(text_, pos_);
      if (!c.valid) return fail("invalid UTF-8");
      pos_ += c.length;
      return c.code_point;
    }
    ++pos_;
    const char e = peek();
    ++pos_;
    switch (e) {
    case 'n': return uint32_t{'\n'};
    case 'r': return uint32_t{'\r'};
    case 't': return uint32_t{'\t'};
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-':
    case '^': return uint32_t(e);
    case 'x': return read_hex(2);
    case 'u': return read_hex(4);
    case 'U': return read_hex(8);
    default: return fail(std::string("unknown escape '\\") + e + "'");
    }
  }

  result<uint32_t> read_hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      const char h = peek();
      if (!std::isxdigit(static_cast<unsigned char>(h)))
        return fail("an escape needs " + std::to_string(digits) + " hex digits");
      v =
        v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h))
                                         ? h - '0'
                                         : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
      ++pos_;
    }
    if (v > 0x10FFFF) return fail("an escape beyond U+10FFFF");
    return v;
  }

  error fail(std::string what) const { return fail_at(pos_, std::move(what)); }
  error fail_at(size_t at, std::string what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      column = text_[i] == '\n' ? 1 : column + 1;
      line += text_[i] == '\n';
    }
    return error_in("grammar", "line " + std::to_string(line) + ", column " +
                                   std::to_string(column) + ": " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
  grammar_builder b_;
};

} // namespace

result<grammar> parse_gbnf(std::string_view text) { return gbnf_parser(text).parse(); }

} // namespace kvactor::model
