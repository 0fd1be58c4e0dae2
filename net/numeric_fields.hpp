#pragma once
// Reading a numeric field of a request body (request_fields.hpp's
// integer_field and number_field) from JSON: its type, then its rule, then
// into the generate_request. Both front doors' parsers read them so, and
// each words the faults in its own protocol.

#include "actors/requests/request_fields.hpp"

#include <simdjson.h>

#include <optional>
#include <string>

namespace kvactor::net {

// What is wrong with a field's value: its JSON type (message: what it must
// be, "an integer" or "a number"), or its range (message: the rule's).
struct field_fault {
  bool wrong_type = false;
  std::string message;
};

// Reads `v` into `req` by the field's type and rule; nullopt when stored.
std::optional<field_fault> read_numeric(const integer_field& field, simdjson::ondemand::value v,
                                        generate_request& req);
std::optional<field_fault> read_numeric(const number_field& field, simdjson::ondemand::value v,
                                        generate_request& req);

} // namespace kvactor::net
