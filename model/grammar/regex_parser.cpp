#include "model/grammar/regex_parser.hpp"

#include "base/utf8.hpp"
#include "model/grammar/grammar.hpp"
#include "model/grammar/regex_escape.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace kvactor::model {

namespace {

constexpr int max_group_depth = 256;
// NOTE: a count {m,n} makes about max(m, n) rules, so their sum bounds the
// grammar's size, which a pattern of many {0,10000} would otherwise blow up.
constexpr int64_t max_total_count = 10 * grammar_builder::max_repeat;

// The code points of both normalized range lists.
code_point_ranges intersect(const code_point_ranges& a, const code_point_ranges& b) {
  code_point_ranges out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const uint32_t lo = std::max(a[i].first, b[j].first);
    const uint32_t hi = std::min(a[i].second, b[j].second);
    if (lo <= hi) out.push_back({lo, hi});
    (a[i].second < b[j].second ? i : j)++;
  }
  return out;
}

// What a JSON string holds unescaped: all but '"', '\\' and controls.
const code_point_ranges& json_string_ranges() {
  static const code_point_ranges r =
    normalize_code_points({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, max_code_point}});
  return r;
}

// A count {m}, {m,} or {m,n}; {,n} is refused (its meaning differs between
// dialects). Numbers stop growing past max_repeat, so they cannot overflow.
struct count {
  int64_t min = 0, max = 0;
  size_t end = 0; // just past the '}'
  bool no_min = false;
};

class regex_parser {
public:
  regex_parser(std::string_view pattern, const regex_options& options)
    : p_(pattern), options_(options) {}

  result<regex_node> parse() {
    for (size_t i = 0; i < p_.size();) {
      const utf8_char ch = decode_utf8(p_, i);
      if (!ch.valid) return refuse(i, "bytes that are not UTF-8");
      i += ch.length;
    }
    auto root = alternation();
    if (root && !at_end()) // alternation() stops at a ')' alone
      return refuse(pos_, "an unbalanced ')'");
    return root;
  }

private:
  error refuse(size_t at, const std::string& what) const { return regex_error(at, what); }
  bool at_end() const { return pos_ >= p_.size(); }
  bool next_is(char c, size_t ahead = 0) const {
    return pos_ + ahead < p_.size() && p_[pos_ + ahead] == c;
  }
  uint32_t take_code_point() {
    const utf8_char ch = decode_utf8(p_, pos_);
    pos_ += ch.length;
    return ch.code_point;
  }

  result<regex_node> alternation() {
    std::vector<regex_node> alternatives;
    for (;;) {
      auto s = sequence();
      if (!s) return s;
      alternatives.push_back(std::move(*s));
      if (!next_is('|')) break;
      ++pos_;
    }
    if (alternatives.size() == 1) return std::move(alternatives[0]);
    regex_node n;
    n.kind = regex_kind::alternation;
    n.nullable = std::ranges::any_of(alternatives, [](const regex_node& a) { return a.nullable; });
    n.parts = std::move(alternatives);
    return n;
  }

  result<regex_node> sequence() {
    regex_node n;
    n.kind = regex_kind::sequence;
    while (!at_end() && !next_is('|') && !next_is(')')) {
      const size_t at = pos_;
      if (quantifier_here())
        return refuse(at, "a quantifier '" + std::string(1, p_[at]) + "' with nothing before it");
      if (next_is('^') || next_is('$')) {
        // NOTE: the output is matched whole anyway, so anchors at the very
        // ends change nothing; anywhere else a mask cannot honour them.
        if (next_is('^') ? at != 0 : at + 1 != p_.size())
          return refuse(at, std::string("an anchor '") + p_[at] +
                              "' inside the pattern (only ^ at its start and $ at its end)");
        ++pos_;
        continue;
      }
      auto a = atom();
      if (!a) return a;
      auto q = quantified(std::move(*a));
      if (!q) return q;
      n.nullable = n.nullable && q->nullable;
      n.parts.push_back(std::move(*q));
    }
    if (n.parts.size() == 1) return std::move(n.parts[0]);
    if (n.parts.empty()) n.kind = regex_kind::empty;
    return n;
  }

  std::optional<count> count_at(size_t at) const {
    size_t i = at + 1;
    auto number = [&](int64_t& value) {
      const size_t from = i;
      for (value = 0; i < p_.size() && is_ascii_digit(p_[i]); ++i)
        value = std::min(value * 10 + (p_[i] - '0'), grammar_builder::max_repeat + 1);
      return i > from;
    };
    count c;
    const bool has_min = number(c.min);
    bool has_max = has_min;
    c.max = c.min;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      has_max = number(c.max);
      if (!has_max) c.max = -1;
    }
    // NOTE: as in PCRE and ECMAScript's Annex B, a '{' that starts no
    // count is a literal.
    if (i >= p_.size() || p_[i] != '}' || (!has_min && !has_max)) return std::nullopt;
    c.end = i + 1;
    c.no_min = !has_min;
    return c;
  }

  bool quantifier_here() const {
    return next_is('*') || next_is('+') || next_is('?') || (next_is('{') && count_at(pos_));
  }

  result<regex_node> quantified(regex_node body) {
    const size_t at = pos_;
    count c;
    if (next_is('*') || next_is('+') || next_is('?')) {
      c = {next_is('+') ? 1 : 0, next_is('?') ? 1 : -1, pos_ + 1, false};
    } else if (std::optional<count> braced = next_is('{') ? count_at(pos_) : std::nullopt) {
      c = *braced;
      const std::string text(p_.substr(at, c.end - at));
      if (c.no_min) return refuse(at, "a count " + text + " without a minimum (write {0,n})");
      if (c.min > grammar_builder::max_repeat || c.max > grammar_builder::max_repeat)
        return refuse(at, "a count " + text + " over the most a grammar repeats (" +
                            std::to_string(grammar_builder::max_repeat) + ")");
      if (c.max >= 0 && c.min > c.max)
        return refuse(at, "a count " + text + " whose minimum is over its maximum");
      total_count_ += std::max(c.min, c.max);
      if (total_count_ > max_total_count)
        return refuse(at, "counts adding up to over " + std::to_string(max_total_count));
    } else {
      return body;
    }
    pos_ = c.end;
    if (next_is('?')) // lazy: the same strings when the whole output must match
      ++pos_;
    else if (next_is('+'))
      return refuse(pos_, "a possessive quantifier '+'");
    if (quantifier_here())
      return refuse(pos_, "a quantifier '" + std::string(1, p_[pos_]) +
                            "' right after another quantifier");
    regex_node n;
    n.kind = regex_kind::repeat;
    n.min = c.min;
    n.max = c.max;
    n.nullable = c.min == 0 || body.nullable;
    n.parts.push_back(std::move(body));
    return n;
  }

  result<regex_node> atom() {
    const size_t at = pos_;
    switch (p_[at]) {
    case '(': return group();
    case '[': return char_class();
    case '.': ++pos_; return characters(at, complement_code_points({{'\n', '\n'}}), false);
    case '\\': {
      auto e = parse_escape(p_, pos_, false);
      if (!e) return e.error();
      return characters(at, std::move(e->ranges), e->single);
    }
    default: {
      const uint32_t cp = take_code_point();
      return characters(at, {{cp, cp}}, true);
    }
    }
  }

  // A characters node, left to what a JSON string holds unescaped when
  // asked; a literal that a JSON string would escape is refused.
  result<regex_node> characters(size_t at, code_point_ranges ranges, bool literal) {
    ranges = normalize_code_points(std::move(ranges));
    if (options_.json_string_characters) {
      code_point_ranges kept = intersect(ranges, json_string_ranges());
      if (literal && kept != ranges)
        return refuse(at, "the pattern's character " + describe_code_point(ranges[0].first) +
                            ", which would need escaping in a JSON string");
      if (kept.empty() && !ranges.empty())
        return refuse(at, "a class of only characters that a JSON string must escape");
      ranges = std::move(kept);
    }
    regex_node n;
    n.kind = regex_kind::characters;
    n.ranges = std::move(ranges);
    n.nullable = false;
    return n;
  }

  result<regex_node> group() {
    const size_t at = pos_++;
    if (next_is('?')) {
      auto prefix = group_prefix(at);
      if (!prefix) return prefix.error();
    }
    if (++depth_ > max_group_depth)
      return refuse(at, "groups nested deeper than " + std::to_string(max_group_depth));
    auto inner = alternation();
    --depth_;
    if (inner && !next_is(')')) return refuse(at, "an unbalanced '(' (no ')' closes it)");
    ++pos_;
    return inner;
  }

  // Past the "?..." of a group that is only a group; refuses the others.
  status group_prefix(size_t at) {
    const std::string_view rest = p_.substr(pos_ + 1);
    auto starts = [&](std::string_view s) { return rest.starts_with(s); };
    if (starts(":")) {
      pos_ += 2;
      return {};
    }
    if (starts("<=") || starts("<!"))
      return refuse(at, "a lookbehind (?" + std::string(rest.substr(0, 2)) + "...)");
    if (starts("=") || starts("!"))
      return refuse(at, "a lookahead (?" + std::string(rest.substr(0, 1)) + "...)");
    if (starts("P=")) return refuse(at, "a backreference (?P=name)");
    if (starts("P<") || starts("<")) {
      pos_ += starts("P<") ? 3 : 2;
      const size_t name_at = pos_;
      while (!at_end() && is_ascii_word(p_[pos_])) ++pos_;
      if (pos_ == name_at || is_ascii_digit(p_[name_at]) || !next_is('>'))
        return refuse(at, "a group name that is not a word followed by '>'");
      ++pos_;
      return {};
    }
    if (starts(">")) return refuse(at, "an atomic group (?>...)");
    if (!rest.empty() &&
        (rest[0] == '-' || rest[0] == '^' ||
         (is_ascii_word(rest[0]) && !is_ascii_digit(rest[0]) && rest[0] != 'P' && rest[0] != 'R')))
      return refuse(at, "inline flags (?" + std::string(1, rest[0]) + "...)");
    return refuse(at, "a group kind '(?" + std::string(rest.substr(0, 1)) + "' that is not known");
  }

  result<regex_node> char_class() {
    const size_t at = pos_++;
    const bool negated = next_is('^');
    if (negated) ++pos_;
    code_point_ranges ranges;
    for (bool first = true;; first = false) {
      if (at_end()) return refuse(at, "an unterminated class '[' (no ']' closes it)");
      // NOTE: a ']' first is a literal, as in PCRE and Python.
      if (next_is(']') && !first) break;
      const size_t item_at = pos_;
      auto lo = class_atom();
      if (!lo) return lo.error();
      if (!next_is('-') || pos_ + 1 >= p_.size() || next_is(']', 1)) {
        ranges.insert(ranges.end(), lo->ranges.begin(), lo->ranges.end());
        continue;
      }
      ++pos_;
      auto hi = class_atom();
      if (!hi) return hi.error();
      const std::string text(p_.substr(item_at, pos_ - item_at));
      if (!lo->single || !hi->single)
        return refuse(item_at, "a range " + text + " with a class at an end");
      if (lo->ranges[0].first > hi->ranges[0].first)
        return refuse(item_at, "a range " + text + " whose start is past its end");
      ranges.push_back({lo->ranges[0].first, hi->ranges[0].first});
    }
    ++pos_;
    ranges = normalize_code_points(std::move(ranges));
    return characters(at, negated ? complement_code_points(ranges) : ranges, false);
  }

  result<regex_characters> class_atom() {
    if (next_is('\\')) return parse_escape(p_, pos_, true);
    if (next_is('[') && (next_is(':', 1) || next_is('=', 1) || next_is('.', 1)))
      return refuse(pos_, "a POSIX class [" + std::string(1, p_[pos_ + 1]) + "...]");
    return regex_character(take_code_point());
  }

  std::string_view p_;
  const regex_options& options_;
  size_t pos_ = 0;
  int depth_ = 0;
  int64_t total_count_ = 0; // of the counts {m,n} so far
};

} // namespace

result<regex_node> parse_regex(std::string_view pattern, const regex_options& options) {
  return regex_parser(pattern, options).parse();
}

} // namespace kvactor::model
