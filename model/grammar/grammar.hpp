#pragma once
// grammar: a context-free grammar over bytes, the form every output
// constraint compiles to (GBNF, JSON, JSON Schema, regular expressions,
// choices). Flat, so that a parse position is one index:
//
//   rule r : alternatives, each a run of slots ending in `end`
//   slot   : bytes (one of 256-byte classes) | rule (a reference) | end
//
//   root ::= "a" item* ;  item ::= [0-9] | "x"
//   slots: [bytes 'a'][rule item*][end] [bytes 0-9][end] [bytes 'x'][end] ...
//
// Characters beyond ASCII are runs of byte classes (utf8_ranges.hpp), so the
// matcher (grammar_matcher.hpp) walks a token's bytes as they are, even a
// token that ends inside a character. grammar_builder makes one; build()
// refuses a grammar whose rules are undefined or can recurse without
// consuming a byte (left recursion), or where a text could start what it
// can never finish (a rule the root reaches that matches no finite text),
// naming the rule.

#include "base/result.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvactor::model {

// A set of bytes.
struct byte_set {
  std::array<uint64_t, 4> bits{};
  bool has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  void add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (unsigned b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool empty() const { return bits == std::array<uint64_t, 4>{}; }
  bool operator==(const byte_set&) const = default;
};

enum class slot_kind : uint8_t { bytes, rule, end };

struct grammar_slot {
  slot_kind kind = slot_kind::end;
  uint32_t arg = 0; // bytes: index into classes; rule: the rule
};

struct grammar {
  std::vector<grammar_slot> slots;
  std::vector<byte_set> classes;
  std::vector<std::vector<uint32_t>> alternatives; // per rule: each alternative's first slot
  std::vector<std::string> names;                  // per rule
  uint32_t root = 0;
};

// One element of an alternative: a byte class or a rule.
struct grammar_element {
  slot_kind kind = slot_kind::bytes;
  uint32_t arg = 0;
};
using grammar_sequence = std::vector<grammar_element>;

class grammar_builder {
public:
  // A rule by name, made (undefined) on first use.
  uint32_t rule(std::string_view name);
  // A rule of its own named after `hint` (hint, hint-1, ...).
  uint32_t fresh_rule(std::string_view hint);
  bool is_defined(uint32_t rule) const { return defined_[rule]; }
  const std::string& name(uint32_t rule) const { return names_[rule]; }
  // Defines `rule` (once): its alternatives.
  void define(uint32_t rule, std::vector<grammar_sequence> alternatives);

  grammar_element bytes(const byte_set& set);
  grammar_element byte(uint8_t b);
  static grammar_element ref(uint32_t rule) { return {slot_kind::rule, rule}; }
  // The bytes of `text`, one class each.
  grammar_sequence literal(std::string_view text);
  // A rule matching one UTF-8 character of the code-point ranges [lo, hi]
  // (surrogates never), or of their complement when `negated`.
  grammar_element characters(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated);
  // A rule for `body` repeated [min, max] times (max < 0: unbounded);
  // refuses counts over max_repeat.
  result<grammar_element> repeat(const grammar_sequence& body, int64_t min, int64_t max);
  // A rule with these alternatives, named after `hint`.
  grammar_element any_of(std::string_view hint, std::vector<grammar_sequence> alternatives);

  // The grammar from `root`; refuses undefined rules, left recursion and a
  // rule the root reaches that matches no finite text.
  result<grammar> build(uint32_t root) const;

  static constexpr int64_t max_repeat = 10000;

private:
  // `item`'s alternatives spelled out: a reference to a defined rule with
  // no empty alternative becomes its alternatives, and again while one is a
  // single reference (a JSON string's character down to its UTF-8 byte
  // runs), stopping before a step would make over 32. A repetition over
  // them is one rule, not a rule per item, so that a mask's split of a top
  // (token_grammar.hpp) sees a string's characters as one run.
  std::vector<grammar_sequence> spelled_out(const grammar_element& item) const;
  // Why `rule`, not `finite`, matches no finite text, naming the rule to
  // blame: walked from it through such rules, the first that needs a byte
  // of a class of nothing, or the first met again.
  std::string without_finite_text(uint32_t rule, const std::vector<bool>& finite) const;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<std::vector<grammar_sequence>> rules_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::unordered_map<std::string, int> next_fresh_; // per hint: the next suffix to try
  std::vector<byte_set> classes_;
  std::unordered_map<std::string, uint32_t> character_rules_; // by their ranges
};

} // namespace kvactor::model
