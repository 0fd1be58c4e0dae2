#pragma once
// Reading a request's output constraint (kvactor/constraint.hpp) from the
// fields each API names it by, into generate_request::constraint. Both
// front doors' parsers read them so; faults as numeric_fields words them.
//
//   vLLM       structured_outputs: {json | regex | choice | grammar | json_object}
//              guided_json, guided_regex, guided_choice, guided_grammar
//   llama.cpp  json_schema, grammar
//   OpenAI     response_format: {"type": "text" | "json_object" | "json_schema",
//              "json_schema": {"name": ..., "schema": {...}, "strict": ...}}
//
// A schema is a JSON object (or a string holding one). One constraint per
// request: a second is refused, naming both.

#include "net/numeric_fields.hpp"

#include <simdjson.h>

#include <optional>
#include <string_view>

namespace kvactor::net {

bool is_constraint_field(std::string_view key);

// Reads `v` (the field `key`) into req.constraint; nullopt when stored.
std::optional<field_fault> read_constraint_field(std::string_view key, simdjson::ondemand::value v,
                                                 generate_request& req);

} // namespace kvactor::net
