#pragma once
// regex_parser: a regular expression (the syntax of regex_grammar.hpp) as a
// small tree, before regex_grammar.cpp emits it into a grammar_builder.
// Groups leave no node, negated classes, shorthands and the dot are already
// code-point ranges, and each node knows whether it can match "".
//
//   (ab|c)*\d   sequence
//               ├─ repeat {0, -1}
//               │  └─ alternation
//               │     ├─ sequence: characters 'a', characters 'b'
//               │     └─ characters 'c'
//               └─ characters [0-9]

#include "base/result.hpp"
#include "model/grammar/regex_grammar.hpp"
#include "model/grammar/utf8_ranges.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace kvactor::model {

enum class regex_kind : uint8_t { empty, characters, sequence, alternation, repeat };

struct regex_node {
  regex_kind kind = regex_kind::empty;
  code_point_ranges ranges;      // characters: one character of these (normalized)
  std::vector<regex_node> parts; // sequence, alternation: in order; repeat: the body
  int64_t min = 0, max = 0;      // repeat: counts (max < 0: unbounded)
  bool nullable = true;          // whether the node matches ""
};

// The tree of `pattern`; refuses what regex_grammar.hpp does not support,
// naming the construct and its byte offset.
result<regex_node> parse_regex(std::string_view pattern, const regex_options& options);

} // namespace kvactor::model
