#pragma once
// The string formats a schema may ask for ("format"), as the characters of
// a JSON string (quotes not included), each no more than a validator accepts:
//
//   date       YYYY-MM-DD, a real day: years 0001-9999, February 29 in leap years
//   time       HH:MM:SS, an optional fraction, then Z or +HH:MM / -HH:MM (RFC 3339)
//   date-time  date "T" time
//   uuid       8-4-4-4-12 hex digits
//   email      local@domain.tld: dot-atoms, no quoted local part, no address literal
//   ipv4       four parts 0-255, no leading zeros

#include "model/grammar/grammar.hpp"

#include <optional>
#include <string_view>

namespace kvactor::model {

// A rule of `b` for `format` (nullopt: a format not built).
std::optional<grammar_element> add_string_format(grammar_builder& b, std::string_view format);

} // namespace kvactor::model
