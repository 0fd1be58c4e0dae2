#include "model/grammar/json_grammar_parts.hpp"

#include "model/grammar/utf8_ranges.hpp"

namespace kvactor::model {

namespace {

byte_set set_of(std::string_view chars) {
  byte_set set;
  for (char c : chars) set.add(static_cast<uint8_t>(c));
  return set;
}

byte_set range_of(char lo, char hi) {
  byte_set set;
  set.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
  return set;
}

byte_set hex_digits() {
  byte_set set = range_of('0', '9');
  set.add_range('A', 'F');
  set.add_range('a', 'f');
  return set;
}

} // namespace

grammar_element json_grammar_parts::value() {
  if (!value_) {
    const uint32_t r = b_.fresh_rule("value");
    value_ = grammar_builder::ref(r); // before the body: objects and arrays hold values
    b_.define(r, {{object()},
                  {array()},
                  {string()},
                  {number()},
                  b_.literal("true"),
                  b_.literal("false"),
                  b_.literal("null")});
  }
  return *value_;
}

grammar_element json_grammar_parts::object() {
  if (!object_) {
    const uint32_t r = b_.fresh_rule("object");
    object_ = grammar_builder::ref(r);
    const grammar_element member = b_.any_of("member", {{string(), colon(), value()}});
    const grammar_element more = b_.repeat({comma(), member}, 0, -1).value();
    b_.define(r, {{b_.byte('{'), b_.byte('}')}, {b_.byte('{'), member, more, b_.byte('}')}});
  }
  return *object_;
}

grammar_element json_grammar_parts::array() {
  if (!array_) {
    const uint32_t r = b_.fresh_rule("array");
    array_ = grammar_builder::ref(r);
    const grammar_element more = b_.repeat({comma(), value()}, 0, -1).value();
    b_.define(r, {{b_.byte('['), b_.byte(']')}, {b_.byte('['), value(), more, b_.byte(']')}});
  }
  return *array_;
}

grammar_element json_grammar_parts::string() {
  if (!string_) {
    const grammar_element characters = b_.repeat({character()}, 0, -1).value();
    string_ = b_.any_of("string", {{quote(), characters, quote()}});
  }
  return *string_;
}

grammar_element json_grammar_parts::character() {
  if (!character_) {
    const grammar_element plain =
      b_.characters({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, max_code_point}}, false);
    const grammar_element hex = b_.bytes(hex_digits());
    const grammar_element d = b_.bytes(set_of("Dd"));
    byte_set below_d = range_of('0', '9');
    below_d.add_range('A', 'C');
    below_d.add_range('a', 'c');
    // NOTE: \uXXXX never names a lone surrogate (it is no character, and
    // would make minLength/maxLength count wrong); a pair of them is one
    // character, as a validator counts it.
    const grammar_element bmp =
      b_.any_of("bmp-escape", {{b_.bytes(below_d), hex, hex, hex},
                               {d, b_.bytes(range_of('0', '7')), hex, hex},
                               {b_.bytes(set_of("EFef")), hex, hex, hex}});
    const grammar_sequence pair = {
      d, b_.bytes(set_of("89ABab")),   hex, hex, b_.byte('\\'), b_.byte('u'),
      d, b_.bytes(set_of("CDEFcdef")), hex, hex};
    grammar_sequence unicode_pair = {b_.byte('u')};
    unicode_pair.insert(unicode_pair.end(), pair.begin(), pair.end());
    const grammar_element escape =
      b_.any_of("escape", {{b_.bytes(set_of("\"\\/bfnrt"))}, {b_.byte('u'), bmp}, unicode_pair});
    character_ = b_.any_of("character", {{plain}, {b_.byte('\\'), escape}});
  }
  return *character_;
}

grammar_element json_grammar_parts::digits(int min, int max) {
  return b_.repeat({b_.bytes(range_of('0', '9'))}, min, max).value();
}

grammar_element json_grammar_parts::integer() {
  if (!integer_) {
    const grammar_element minus = b_.any_of("minus", {{b_.byte('-')}, {}});
    const grammar_element magnitude =
      b_.any_of("magnitude", {{b_.byte('0')},
                              {b_.bytes(range_of('1', '9')), digits(0, max_integer_digits - 1)}});
    integer_ = b_.any_of("integer", {{minus, magnitude}});
  }
  return *integer_;
}

grammar_element json_grammar_parts::number() {
  if (!number_) {
    const grammar_element fraction =
      b_.any_of("fraction", {{b_.byte('.'), digits(1, max_fraction_digits)}, {}});
    const grammar_element sign = b_.any_of("sign", {{b_.byte('+')}, {b_.byte('-')}, {}});
    const grammar_element exponent =
      b_.any_of("exponent", {{b_.bytes(set_of("eE")), sign, digits(1, max_exponent_digits)}, {}});
    number_ = b_.any_of("number", {{integer(), fraction, exponent}});
  }
  return *number_;
}

grammar_element json_grammar_parts::comma() {
  if (!comma_) comma_ = b_.any_of("comma", {{b_.byte(',')}, b_.literal(", ")});
  return *comma_;
}

grammar_element json_grammar_parts::colon() {
  if (!colon_) colon_ = b_.any_of("colon", {{b_.byte(':')}, b_.literal(": ")});
  return *colon_;
}

} // namespace kvactor::model
