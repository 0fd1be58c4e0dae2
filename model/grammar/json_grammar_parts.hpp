#pragma once
// json_grammar_parts: the rules of JSON itself, shared by json_object_grammar
// and every schema — any value, strings, numbers, the separators — each made
// once in a builder, on first use. Compact JSON: a space may follow ':' and
// ',' and nothing else.
//
//   value   ::= object | array | string | number | "true" | "false" | "null"
//   object  ::= "{" "}" | "{" string colon value (comma string colon value)* "}"
//   string  ::= '"' character* '"'
//   character ::= [^"\ controls] | "\" (["\/bfnrt] | "u" hex4 | "u" high "\u" low)
//   number  ::= integer ("." [0-9]{1,15})? ([eE] [+-]? [0-9]{1,3})?
//   integer ::= "-"? ("0" | [1-9] [0-9]{0,14})
//   comma   ::= "," | ", "          colon ::= ":" | ": "

#include "model/grammar/grammar.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kvactor::model {

class json_grammar_parts {
public:
  explicit json_grammar_parts(grammar_builder& b) : b_(b) {}

  grammar_builder& builder() { return b_; }
  grammar_element value();
  grammar_element object();
  grammar_element array();
  grammar_element string();    // quotes included
  grammar_element character(); // one character of a string: itself or an escape
  grammar_element number();
  grammar_element integer();
  grammar_element comma();
  grammar_element colon();
  grammar_element quote() { return b_.byte('"'); }

  // NOTE: digit runs are bounded (15 integer digits, 15 fraction digits, 2
  // exponent digits) so that a model cannot write a number forever, and
  // every number it writes is a finite double (parsers such as simdjson
  // refuse 1e400): below 1e15 x 1e99.
  static constexpr int max_integer_digits = 15;
  static constexpr int max_fraction_digits = 15;
  static constexpr int max_exponent_digits = 2;

private:
  grammar_element digits(int min, int max);

  grammar_builder& b_;
  std::optional<grammar_element> value_, object_, array_, string_, character_, number_, integer_,
    comma_, colon_;
};

} // namespace kvactor::model
