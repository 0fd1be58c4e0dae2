#pragma once
// Regular expressions as grammars: the whole output (or a JSON string's
// characters, for a schema's "pattern") must match the expression.
//
// The syntax is the common core of ECMAScript, Python and PCRE: literals and
// escapes (\n \t \\ \. \uXXXX \xHH ...), classes [a-z] [^...] and \d \w \s
// \D \W \S, the dot (any character but newline), groups (...) and (?:...),
// alternation |, the quantifiers * + ? {m} {m,} {m,n} (a lazy ? after one
// changes nothing here), ^ and $ at the ends. What a mask cannot decide —
// backreferences, lookaround, anchors inside — is refused, naming it.

#include "base/result.hpp"
#include "model/grammar/grammar.hpp"

#include <string_view>

namespace kvactor::model {

struct regex_options {
  // Leave out '"', '\\' and control characters, which a JSON string must
  // escape (a schema's pattern is matched against the string's characters).
  bool json_string_characters = false;
};

// A rule of `b` matching exactly the strings `pattern` fully matches.
result<grammar_element> add_regex(grammar_builder& b, std::string_view pattern,
                                  const regex_options& options = {});

// A grammar of the strings `pattern` fully matches.
result<grammar> regex_grammar(std::string_view pattern);

} // namespace kvactor::model
