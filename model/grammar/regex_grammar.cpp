#include "model/grammar/regex_grammar.hpp"

#include "base/utf8.hpp"
#include "model/grammar/regex_parser.hpp"

#include <optional>
#include <unordered_map>

namespace kvactor::model {

namespace {

// Emits a regex_node tree into a grammar_builder. A repetition of something
// that can match "" would be left recursion (star ::= item star | ""), so
// such a body is repeated in its non-empty form X' (X without ""):
//
//   X{m,n} with X nullable  ==  X'{0,n}       (each empty X drops out)
//   (X{m,n})'               ==  X'{1,n}  or X{max(m,1),n} when X is not nullable
//   (A|B)'                  ==  A' | B'
//   (A1 A2 .. Ak)'          ==  A1' A2 .. Ak | (A2 .. Ak)'   (every Ai nullable)
//
// Both forms are memoized per node, so what they share is emitted once.
class regex_emitter {
public:
  explicit regex_emitter(grammar_builder& b) : b_(b) {}

  // The elements matching `n`.
  const grammar_sequence& plain(const regex_node& n) {
    if (auto at = plain_.find(&n); at != plain_.end()) return at->second;
    grammar_sequence s = make_plain(n);
    return plain_.emplace(&n, std::move(s)).first->second;
  }

  // The elements matching `n`'s strings but "" (nullopt: there are none).
  const std::optional<grammar_sequence>& non_empty(const regex_node& n) {
    if (auto at = non_empty_.find(&n); at != non_empty_.end()) return at->second;
    std::optional<grammar_sequence> s = make_non_empty(n);
    return non_empty_.emplace(&n, std::move(s)).first->second;
  }

private:
  grammar_sequence make_plain(const regex_node& n) {
    switch (n.kind) {
    case regex_kind::empty: return {};
    case regex_kind::characters: return characters(n.ranges);
    case regex_kind::sequence: {
      grammar_sequence s;
      for (const regex_node& part : n.parts) {
        const grammar_sequence& p = plain(part);
        s.insert(s.end(), p.begin(), p.end());
      }
      return s;
    }
    case regex_kind::alternation: {
      std::vector<grammar_sequence> alternatives;
      for (const regex_node& part : n.parts) alternatives.push_back(plain(part));
      return {b_.any_of("alt", std::move(alternatives))};
    }
    case regex_kind::repeat: {
      const regex_node& body = n.parts[0];
      if (n.max == 0) return {};
      if (!body.nullable) return {repeat(plain(body), n.min, n.max)};
      const std::optional<grammar_sequence>& once = non_empty(body);
      if (!once) return {};
      return {repeat(*once, 0, n.max)};
    }
    }
    return {};
  }

  std::optional<grammar_sequence> make_non_empty(const regex_node& n) {
    if (!n.nullable) return plain(n);
    switch (n.kind) {
    case regex_kind::empty:
    case regex_kind::characters: return std::nullopt;
    case regex_kind::alternation: {
      std::vector<grammar_sequence> alternatives;
      for (const regex_node& part : n.parts)
        if (const std::optional<grammar_sequence>& once = non_empty(part))
          alternatives.push_back(*once);
      return one_of(std::move(alternatives));
    }
    case regex_kind::repeat: {
      const regex_node& body = n.parts[0];
      if (n.max == 0) return std::nullopt;
      if (!body.nullable) return grammar_sequence{repeat(plain(body), 1, n.max)};
      const std::optional<grammar_sequence>& once = non_empty(body);
      if (!once) return std::nullopt;
      return grammar_sequence{repeat(*once, 1, n.max)};
    }
    case regex_kind::sequence: {
      // From the back: `rest` matches parts i.., `tail` their non-empty form.
      grammar_sequence rest;
      std::optional<grammar_sequence> tail;
      for (size_t i = n.parts.size(); i-- > 0;) {
        std::vector<grammar_sequence> alternatives;
        if (const std::optional<grammar_sequence>& once = non_empty(n.parts[i])) {
          alternatives.push_back(*once);
          alternatives.back().insert(alternatives.back().end(), rest.begin(), rest.end());
        }
        if (tail) alternatives.push_back(std::move(*tail));
        tail = one_of(std::move(alternatives));
        grammar_sequence longer = plain(n.parts[i]);
        longer.insert(longer.end(), rest.begin(), rest.end());
        // NOTE: one rule per suffix keeps the form linear in the parts.
        rest = longer.size() > 1 ? grammar_sequence{b_.any_of("rest", {longer})} : longer;
      }
      return tail;
    }
    }
    return std::nullopt;
  }

  std::optional<grammar_sequence> one_of(std::vector<grammar_sequence> alternatives) {
    if (alternatives.empty()) return std::nullopt;
    if (alternatives.size() == 1) return std::move(alternatives[0]);
    return grammar_sequence{b_.any_of("alt", std::move(alternatives))};
  }

  grammar_element repeat(const grammar_sequence& body, int64_t min, int64_t max) {
    result<grammar_element> r = b_.repeat(body, min, max);
    KVACTOR_ASSERT(r.has_value(), "regex counts are checked by the parser");
    return *r;
  }

  grammar_sequence characters(const code_point_ranges& ranges) {
    if (ranges.size() == 1 && ranges[0].first == ranges[0].second) {
      std::string text;
      append_utf8(text, ranges[0].first);
      return b_.literal(text);
    }
    return {b_.characters(ranges, false)};
  }

  grammar_builder& b_;
  std::unordered_map<const regex_node*, grammar_sequence> plain_;
  std::unordered_map<const regex_node*, std::optional<grammar_sequence>> non_empty_;
};

} // namespace

result<grammar_element> add_regex(grammar_builder& b, std::string_view pattern,
                                  const regex_options& options) {
  result<regex_node> tree = parse_regex(pattern, options);
  if (!tree) return tree.error();
  regex_emitter emitter(b);
  return b.any_of("regex", {emitter.plain(*tree)});
}

result<grammar> regex_grammar(std::string_view pattern) {
  grammar_builder b;
  result<grammar_element> root = add_regex(b, pattern);
  if (!root) return root.error();
  return b.build(root->arg);
}

} // namespace kvactor::model
