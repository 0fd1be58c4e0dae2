#pragma once
// JSON and JSON Schema as grammars: what response_format json_object and
// json_schema (and guided_json, json_schema, structured_outputs.json) let a
// model write. Compact JSON as most serializers write it: no whitespace but
// one optional space after ':' and ','.
//
// JSON Schema keywords: type (one or a list), properties, required,
// additionalProperties, enum, const, items, prefixItems, minItems,
// maxItems, minLength, maxLength, pattern, format (date, time, date-time,
// uuid, email, ipv4), anyOf, oneOf (as anyOf), allOf of one schema, $ref to
// "#", "#/$defs/..." and "#/definitions/...", and the annotations (title,
// description, examples, default, $schema, $id, ...), which change nothing.
// A keyword that constrains in a way not built is refused, naming it and
// where it sits ("schema.properties.age: minimum is not supported").

#include "base/result.hpp"
#include "model/grammar/grammar.hpp"

#include <string_view>

namespace kvactor::model {

// Any JSON object (response_format json_object).
grammar json_object_grammar();

// The JSON texts valid under `schema` (a JSON Schema, as JSON text).
result<grammar> json_schema_grammar(std::string_view schema);

} // namespace kvactor::model
