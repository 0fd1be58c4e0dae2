#pragma once
// json_schema_compiler: a JSON Schema (a simdjson DOM tree) into rules of a
// grammar_builder, each schema one element:
//
//   true                        any value          false: refused
//   { $ref | anyOf | oneOf | allOf }    a reference or alternatives, alone
//   { enum / const, type? }     the values (of those types), written canonically
//   { type? ... }               one alternative per type (without `type`, the
//                               types the other keywords imply, else any value):
//     object   properties in the schema's order, additional ones after
//     array    prefixItems, then items, minItems..maxItems in all
//     string   minLength..maxLength characters, or a pattern, or a format
//     number, integer, boolean, null
//
// A $ref's target is one rule, made once, so recursive schemas are recursive
// rules. Errors name the keyword and where its schema sits, as a path:
// "json_schema: schema.properties.tags.items: minimum is not supported".

#include "base/result.hpp"
#include "model/grammar/grammar.hpp"
#include "model/grammar/json_grammar_parts.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvactor::model {

class json_schema_compiler {
public:
  json_schema_compiler(grammar_builder& b, simdjson::dom::element root)
    : b_(b), parts_(b), root_(root) {}

  // The element of `schema`, which sits at `path`.
  result<grammar_element> compile(simdjson::dom::element schema, const std::string& path);
  // The rule of a $ref's target: "#", "#/$defs/NAME" or "#/definitions/NAME".
  result<grammar_element> reference(std::string_view target, const std::string& path);

private:
  result<grammar_element> combination(std::string_view keyword, simdjson::dom::element value,
                                      const std::string& path);
  result<std::vector<std::string_view>> types_of(simdjson::dom::object s, const std::string& path);
  result<grammar_element> of_type(std::string_view type, simdjson::dom::object s,
                                  const std::string& path);
  result<grammar_element> object(simdjson::dom::object s, const std::string& path);
  result<grammar_element> array(simdjson::dom::object s, const std::string& path);
  result<grammar_element> string(simdjson::dom::object s, const std::string& path);
  result<grammar_element> values(simdjson::dom::object s,
                                 const std::vector<std::string_view>& types,
                                 const std::string& path);

  grammar_builder& b_;
  json_grammar_parts parts_;
  simdjson::dom::element root_;
  std::unordered_map<std::string, uint32_t> references_; // by target
};

// "json_schema: <path>: <what>".
error schema_error(const std::string& path, std::string_view what);
// The member `key` of `o` (nullopt: none).
std::optional<simdjson::dom::element> member(simdjson::dom::object o, std::string_view key);
// The non-negative integer under `key` (-1: absent).
result<int64_t> schema_count(simdjson::dom::object o, std::string_view key,
                             const std::string& path);
// `value` as compact JSON, strings escaped as json::quote does.
std::string canonical_json(simdjson::dom::element value);

} // namespace kvactor::model
