#include "model/grammar/grammar.hpp"

#include "base/assert.hpp"
#include "model/grammar/utf8_ranges.hpp"

#include <algorithm>
#include <optional>

namespace kvactor::model {

uint32_t grammar_builder::rule(std::string_view name) {
  if (auto at = by_name_.find(std::string(name)); at != by_name_.end()) return at->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  defined_.push_back(false);
  rules_.emplace_back();
  by_name_.emplace(std::string(name), id);
  return id;
}

uint32_t grammar_builder::fresh_rule(std::string_view hint) {
  // NOTE: each hint remembers where its suffixes stopped, so that making
  // n rules of one hint (a{0,10000}) takes linear, not quadratic, time.
  std::string name(hint);
  int& n = next_fresh_[name];
  for (; by_name_.contains(name); ++n) name = std::string(hint) + "-" + std::to_string(n + 1);
  return rule(name);
}

void grammar_builder::define(uint32_t rule, std::vector<grammar_sequence> alternatives) {
  rules_[rule] = std::move(alternatives);
  defined_[rule] = true;
}

grammar_element grammar_builder::bytes(const byte_set& set) {
  auto at = std::find(classes_.begin(), classes_.end(), set);
  if (at == classes_.end()) at = classes_.insert(classes_.end(), set);
  return {slot_kind::bytes, static_cast<uint32_t>(at - classes_.begin())};
}

grammar_element grammar_builder::byte(uint8_t b) {
  byte_set set;
  set.add(b);
  return bytes(set);
}

grammar_sequence grammar_builder::literal(std::string_view text) {
  grammar_sequence seq;
  seq.reserve(text.size());
  for (char c : text) seq.push_back(byte(static_cast<uint8_t>(c)));
  return seq;
}

grammar_element grammar_builder::characters(std::vector<std::pair<uint32_t, uint32_t>> ranges,
                                            bool negated) {
  ranges = normalize_code_points(std::move(ranges));
  if (negated) ranges = complement_code_points(ranges);
  std::string key;
  for (auto [lo, hi] : ranges) key += std::to_string(lo) + "-" + std::to_string(hi) + ",";
  if (auto at = character_rules_.find(key); at != character_rules_.end()) return ref(at->second);
  const uint32_t r = fresh_rule("char");
  std::vector<grammar_sequence> alternatives;
  for (const utf8_byte_ranges& seq : utf8_sequences(ranges)) {
    grammar_sequence s;
    for (auto [lo, hi] : seq) {
      byte_set set;
      set.add_range(lo, hi);
      s.push_back(bytes(set));
    }
    alternatives.push_back(std::move(s));
  }
  define(r, std::move(alternatives)); // none: a class of nothing matches nothing
  character_rules_.emplace(std::move(key), r);
  return ref(r);
}

grammar_element grammar_builder::any_of(std::string_view hint,
                                        std::vector<grammar_sequence> alternatives) {
  const uint32_t r = fresh_rule(hint);
  define(r, std::move(alternatives));
  return ref(r);
}

std::vector<grammar_sequence> grammar_builder::spelled_out(const grammar_element& item) const {
  constexpr size_t max_alternatives = 32;
  std::vector<grammar_sequence> out{{item}};
  for (int depth = 0; depth < 8; ++depth) { // a cycle of single references stays as it is
    std::vector<grammar_sequence> next;
    bool changed = false;
    for (const grammar_sequence& alt : out) {
      if (alt.size() == 1 && alt[0].kind == slot_kind::rule && defined_[alt[0].arg]) {
        const std::vector<grammar_sequence>& inner = rules_[alt[0].arg];
        if (!inner.empty() && std::ranges::none_of(inner, &grammar_sequence::empty)) {
          next.insert(next.end(), inner.begin(), inner.end());
          changed = true;
          continue;
        }
      }
      next.push_back(alt);
    }
    if (!changed || next.size() > max_alternatives) break;
    out = std::move(next);
  }
  return out;
}

result<grammar_element> grammar_builder::repeat(const grammar_sequence& body, int64_t min,
                                                int64_t max) {
  if (min > max_repeat || max > max_repeat)
    return error_in("grammar", "a repetition count over " + std::to_string(max_repeat));
  const grammar_element item = body.size() == 1 ? body[0] : any_of("item", {body});
  grammar_sequence whole(static_cast<size_t>(min), item);
  const std::vector<grammar_sequence> items = spelled_out(item);
  // item_1 then, item_2 then, ... or nothing.
  auto each_then = [&](std::optional<grammar_element> then) {
    std::vector<grammar_sequence> alternatives = items;
    if (then)
      for (grammar_sequence& alt : alternatives) alt.push_back(*then);
    alternatives.emplace_back();
    return alternatives;
  };
  if (max < 0) {
    const uint32_t star = fresh_rule("star");
    define(star, each_then(ref(star)));
    whole.push_back(ref(star));
  } else if (max > min) {
    // NOTE: optional_k ::= item optional_{k-1} | "" — the last reference is
    // a tail call, so the matcher's stacks do not grow with the count.
    uint32_t optional = fresh_rule("optional");
    define(optional, each_then(std::nullopt));
    for (int64_t k = min + 1; k < max; ++k) {
      const uint32_t next = fresh_rule("optional");
      define(next, each_then(ref(optional)));
      optional = next;
    }
    whole.push_back(ref(optional));
  }
  return any_of("repeat", {std::move(whole)});
}

namespace {

// The rules with an alternative whose every element holds: a bytes element
// when `bytes_hold` says so, a rule reference when that rule is in the set.
// The least such set, from a worklist: each alternative counts its
// references not yet in the set, so every reference is visited once (a
// chain of rules that each need the next is linear, not quadratic).
template <class BytesHold>
std::vector<bool> rules_where(const std::vector<std::vector<grammar_sequence>>& rules,
                              BytesHold bytes_hold) {
  struct alternative {
    uint32_t rule;
    size_t references_left;
  };
  std::vector<alternative> alternatives;
  std::vector<std::vector<uint32_t>> referenced_by(rules.size()); // once per reference
  std::vector<bool> found(rules.size(), false);
  std::vector<uint32_t> todo;
  auto add = [&](uint32_t r) {
    if (!found[r]) {
      found[r] = true;
      todo.push_back(r);
    }
  };
  for (uint32_t r = 0; r < rules.size(); ++r)
    for (const grammar_sequence& alt : rules[r]) {
      if (!std::ranges::all_of(alt, [&](const grammar_element& e) {
            return e.kind == slot_kind::rule || bytes_hold(e);
          }))
        continue;
      const auto a = static_cast<uint32_t>(alternatives.size());
      size_t references = 0;
      for (const grammar_element& e : alt)
        if (e.kind == slot_kind::rule) {
          referenced_by[e.arg].push_back(a);
          ++references;
        }
      alternatives.push_back({r, references});
      if (references == 0) add(r);
    }
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    for (uint32_t a : referenced_by[r])
      if (--alternatives[a].references_left == 0) add(alternatives[a].rule);
  }
  return found;
}

// Whether each rule can match the empty string.
std::vector<bool> nullable_rules(const std::vector<std::vector<grammar_sequence>>& rules) {
  return rules_where(rules, [](const grammar_element&) { return false; });
}

// Whether each rule matches some finite text: an alternative of non-empty
// byte classes and such rules.
std::vector<bool> finite_rules(const std::vector<std::vector<grammar_sequence>>& rules,
                               const std::vector<byte_set>& classes) {
  return rules_where(rules, [&](const grammar_element& e) { return !classes[e.arg].empty(); });
}

// The rules `root` refers to, directly or not, and itself.
std::vector<bool> reachable_rules(const std::vector<std::vector<grammar_sequence>>& rules,
                                  uint32_t root) {
  std::vector<bool> reached(rules.size(), false);
  std::vector<uint32_t> todo{root};
  reached[root] = true;
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    for (const grammar_sequence& alt : rules[r])
      for (const grammar_element& e : alt)
        if (e.kind == slot_kind::rule && !reached[e.arg]) {
          reached[e.arg] = true;
          todo.push_back(e.arg);
        }
  }
  return reached;
}

} // namespace

std::string grammar_builder::without_finite_text(uint32_t rule,
                                                const std::vector<bool>& finite) const {
  // NOTE: an empty class is a bytes slot of no byte, or a character rule
  // of no alternative (grammar_builder::characters).
  const auto empty_class = [&](uint32_t r) {
    return "rule '" + names_[r] + "' matches no finite text (it needs a character of an empty " +
           "class)";
  };
  if (rules_[rule].empty()) return empty_class(rule);
  std::vector<bool> on_path(rules_.size(), false);
  for (uint32_t r = rule;;) {
    on_path[r] = true;
    // NOTE: every alternative of r has an element that is not finite: the
    // first alternative's first is followed.
    std::optional<uint32_t> next;
    for (const grammar_element& e : rules_[r].front()) {
      if (e.kind == slot_kind::bytes && classes_[e.arg].empty()) return empty_class(r);
      if (e.kind == slot_kind::rule && !finite[e.arg]) {
        next = e.arg;
        break;
      }
    }
    KVACTOR_ASSERT(next.has_value(), "a rule without finite text has a part without it");
    if (rules_[*next].empty()) return empty_class(r);
    if (on_path[*next])
      return "rule '" + names_[*next] + "' matches no finite text (it always needs itself again)";
    r = *next;
  }
}

result<grammar> grammar_builder::build(uint32_t root) const {
  for (size_t r = 0; r < rules_.size(); ++r)
    if (!defined_[r])
      return error_in("grammar", "rule '" + names_[r] + "' is used but not defined");
  // Left recursion: a rule reaching itself through references that may
  // each match nothing before them.
  const std::vector<bool> nullable = nullable_rules(rules_);
  std::vector<std::vector<uint32_t>> first(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r)
    for (const grammar_sequence& alt : rules_[r])
      for (const grammar_element& e : alt) {
        if (e.kind != slot_kind::rule) break;
        first[r].push_back(e.arg);
        if (!nullable[e.arg]) break;
      }
  std::vector<uint8_t> mark(rules_.size(), 0); // 0 new, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, size_t>> path;
  for (uint32_t start = 0; start < rules_.size(); ++start) {
    if (mark[start]) continue;
    path.push_back({start, 0});
    mark[start] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == first[r].size()) {
        mark[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t s = first[r][next++];
      if (mark[s] == 1)
        return error_in("grammar", "rule '" + names_[s] +
                                       "' can reach itself without matching a byte (left "
                                       "recursion, or a repetition of something that may be "
                                       "empty)");
      if (mark[s] == 0) {
        mark[s] = 1;
        path.push_back({s, 0});
      }
    }
  }
  // NOTE: a text that enters a rule matching nothing finite (a class of
  // nothing, a rule that always needs itself again) could neither go on
  // nor end: a model held to it would write without end or be stuck.
  const std::vector<bool> finite = finite_rules(rules_, classes_);
  if (!finite[root]) return error_in("grammar", without_finite_text(root, finite));
  const std::vector<bool> reached = reachable_rules(rules_, root);
  for (uint32_t r = 0; r < rules_.size(); ++r)
    if (reached[r] && !finite[r]) return error_in("grammar", without_finite_text(r, finite));
  grammar g;
  g.classes = classes_;
  g.names = names_;
  g.root = root;
  g.alternatives.resize(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r)
    for (const grammar_sequence& alt : rules_[r]) {
      g.alternatives[r].push_back(static_cast<uint32_t>(g.slots.size()));
      for (const grammar_element& e : alt) g.slots.push_back({e.kind, e.arg});
      g.slots.push_back({slot_kind::end, 0});
    }
  return g;
}

} // namespace kvactor::model
