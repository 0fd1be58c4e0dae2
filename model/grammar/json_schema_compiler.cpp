#include "model/grammar/json_schema_compiler.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace kvactor::model {

using simdjson::dom::element_type;

namespace {

// Keywords that change nothing about what is valid.
constexpr std::array<std::string_view, 16> annotations = {
  "title",       "description", "examples",         "default",        "$schema",       "$id",
  "$comment",    "deprecated",  "readOnly",         "writeOnly",      "discriminator", "$defs",
  "definitions", "$anchor",     "contentMediaType", "contentEncoding"};

constexpr std::array<std::string_view, 18> supported = {
  "type",     "properties", "required",  "additionalProperties",
  "enum",     "const",      "items",     "prefixItems",
  "minItems", "maxItems",   "minLength", "maxLength",
  "pattern",  "format",     "anyOf",     "oneOf",
  "allOf",    "$ref"};

constexpr std::array<std::string_view, 4> combinations = {"$ref", "anyOf", "oneOf", "allOf"};

constexpr std::array<std::string_view, 7> type_names = {"object",  "array",   "string", "number",
                                                        "integer", "boolean", "null"};

bool contains(auto& list, std::string_view key) {
  return std::ranges::find(list, key) != list.end();
}

// The types the keywords of `s` only make sense for.
// NOTE: narrower than JSON Schema, where {"properties": ...} lets a string
// through too; a schema that names them means that type, and whatever is
// written is still valid.
std::vector<std::string_view> implied_types(simdjson::dom::object s) {
  std::vector<std::string_view> types;
  const auto any = [&](std::initializer_list<std::string_view> keys) {
    return std::ranges::any_of(keys, [&](std::string_view k) { return member(s, k).has_value(); });
  };
  if (any({"properties", "required", "additionalProperties"})) types.push_back("object");
  if (any({"items", "prefixItems", "minItems", "maxItems"})) types.push_back("array");
  if (any({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
  return types;
}

// "~1" is '/', "~0" is '~' in a JSON pointer's part (nullopt: a part
// that goes deeper).
std::optional<std::string> pointer_part(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/') return std::nullopt;
    if (text[i] == '~' && i + 1 < text.size() && (text[i + 1] == '0' || text[i + 1] == '1')) {
      out += text[++i] == '0' ? '~' : '/';
      continue;
    }
    out += text[i];
  }
  return out;
}

} // namespace

error schema_error(const std::string& path, std::string_view what) {
  return error_in("json_schema", path + ": " + std::string(what));
}

std::optional<simdjson::dom::element> member(simdjson::dom::object o, std::string_view key) {
  simdjson::dom::element e;
  if (o.at_key(key).get(e)) return std::nullopt;
  return e;
}

result<int64_t> schema_count(simdjson::dom::object o, std::string_view key,
                             const std::string& path) {
  const std::optional<simdjson::dom::element> e = member(o, key);
  if (!e) return int64_t{-1};
  const error bad = schema_error(path, std::string(key) + " must be a non-negative integer");
  switch (e->type()) {
  case element_type::INT64: {
    const int64_t n = e->get_int64().value_unsafe();
    return n < 0 ? result<int64_t>(bad) : n;
  }
  case element_type::UINT64: return int64_t{INT64_MAX}; // past any count we build anyway
  case element_type::DOUBLE: {
    // NOTE: 2.0 is an integer to JSON Schema.
    const double d = e->get_double().value_unsafe();
    if (d < 0 || d != std::floor(d) || d > 9e18) return bad;
    return static_cast<int64_t>(d);
  }
  default: return bad;
  }
}

result<grammar_element> json_schema_compiler::compile(simdjson::dom::element schema,
                                                      const std::string& path) {
  if (schema.type() == element_type::BOOL) {
    if (schema.get_bool().value_unsafe()) return parts_.value();
    return schema_error(path, "false accepts nothing");
  }
  simdjson::dom::object s;
  if (schema.get_object().get(s))
    return schema_error(path, "a schema must be an object or a boolean");
  std::vector<std::string_view> constraints;
  for (const simdjson::dom::key_value_pair& kv : s) {
    // NOTE: "x-..." extensions (OpenAPI's) are annotations too.
    if (contains(annotations, kv.key) || kv.key.starts_with("x-")) continue;
    if (!contains(supported, kv.key))
      return schema_error(path, std::string(kv.key) + " is not supported");
    constraints.push_back(kv.key);
  }
  const auto together = [&](std::string_view keyword, auto& allowed) -> std::optional<error> {
    for (std::string_view other : constraints)
      if (other != keyword && !contains(allowed, other))
        return schema_error(path, std::string(other) + " together with " + std::string(keyword) +
                                    " is not supported");
    return std::nullopt;
  };
  for (std::string_view keyword : combinations)
    if (const std::optional<simdjson::dom::element> value = member(s, keyword)) {
      constexpr std::array<std::string_view, 0> alone{};
      if (auto e = together(keyword, alone)) return *e;
      return combination(keyword, *value, path);
    }
  result<std::vector<std::string_view>> types = types_of(s, path);
  if (!types) return types.error();
  for (std::string_view keyword : {"enum", "const"})
    if (member(s, keyword)) {
      constexpr std::array<std::string_view, 3> with_values = {"type", "enum", "const"};
      if (auto e = together(keyword, with_values)) return *e;
      return values(s, *types, path);
    }
  if (types->empty()) return parts_.value();
  std::vector<grammar_sequence> alternatives;
  for (std::string_view type : *types) {
    result<grammar_element> e = of_type(type, s, path);
    if (!e) return e.error();
    alternatives.push_back({*e});
  }
  if (alternatives.size() == 1) return alternatives[0][0];
  return b_.any_of("types", std::move(alternatives));
}

result<std::vector<std::string_view>> json_schema_compiler::types_of(simdjson::dom::object s,
                                                                     const std::string& path) {
  const std::optional<simdjson::dom::element> type = member(s, "type");
  if (!type) return implied_types(s);
  std::vector<std::string_view> names;
  std::string_view name;
  simdjson::dom::array list;
  if (!type->get_string().get(name)) {
    names.push_back(name);
  } else if (!type->get_array().get(list)) {
    for (simdjson::dom::element e : list) {
      if (e.get_string().get(name))
        return schema_error(path, "type must be a type name or a list of them");
      if (!contains(names, name)) names.push_back(name);
    }
  } else {
    return schema_error(path, "type must be a type name or a list of them");
  }
  for (std::string_view n : names)
    if (!contains(type_names, n))
      return schema_error(path, "type '" + std::string(n) + "' is not a JSON Schema type");
  if (names.empty()) return schema_error(path, "type [] accepts nothing");
  return names;
}

result<grammar_element> json_schema_compiler::of_type(std::string_view type,
                                                      simdjson::dom::object s,
                                                      const std::string& path) {
  if (type == "object") return object(s, path);
  if (type == "array") return array(s, path);
  if (type == "string") return string(s, path);
  if (type == "number") return parts_.number();
  if (type == "integer") return parts_.integer();
  if (type == "boolean") return b_.any_of("boolean", {b_.literal("true"), b_.literal("false")});
  return b_.any_of("null", {b_.literal("null")});
}

result<grammar_element> json_schema_compiler::combination(std::string_view keyword,
                                                          simdjson::dom::element value,
                                                          const std::string& path) {
  const std::string at = path + "." + std::string(keyword);
  if (keyword == "$ref") {
    std::string_view target;
    if (value.get_string().get(target)) return schema_error(path, "$ref must be a string");
    return reference(target, path);
  }
  simdjson::dom::array list;
  if (value.get_array().get(list) || list.size() == 0)
    return schema_error(path, std::string(keyword) + " must be a non-empty list of schemas");
  if (keyword == "allOf") {
    if (list.size() != 1)
      return schema_error(path, "allOf of more than one schema is not supported");
    return compile(list.at(0).value_unsafe(), at + ".0");
  }
  // NOTE: oneOf is built as anyOf: a text that two branches accept passes
  // here and fails a validator. Schemas in practice make the branches
  // disjoint (different types, different required keys, a const tag).
  std::vector<grammar_sequence> alternatives;
  for (simdjson::dom::element branch : list) {
    result<grammar_element> e = compile(branch, at + "." + std::to_string(alternatives.size()));
    if (!e) return e.error();
    alternatives.push_back({*e});
  }
  return b_.any_of(keyword == "anyOf" ? "any-of" : "one-of", std::move(alternatives));
}

result<grammar_element> json_schema_compiler::reference(std::string_view target,
                                                        const std::string& path) {
  if (auto at = references_.find(std::string(target)); at != references_.end())
    return grammar_builder::ref(at->second);
  const error unsupported =
    schema_error(path, "$ref to '" + std::string(target) + "' is not supported");
  simdjson::dom::element schema = root_;
  std::string target_path = "schema";
  if (target != "#") {
    std::string_view place;
    for (std::string_view prefix : {"#/$defs/", "#/definitions/"})
      if (target.starts_with(prefix)) place = prefix.substr(2, prefix.size() - 3);
    if (place.empty()) return unsupported;
    const std::optional<std::string> name = pointer_part(target.substr(place.size() + 3));
    if (!name) return unsupported;
    simdjson::dom::object root, definitions;
    std::optional<simdjson::dom::element> found;
    if (!root_.get_object().get(root))
      if (const std::optional<simdjson::dom::element> defs = member(root, place))
        if (!defs->get_object().get(definitions)) found = member(definitions, *name);
    if (!found)
      return schema_error(path, "$ref to '" + std::string(target) + "': no such definition");
    schema = *found;
    // NOTE: appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on
    // "." + std::string(...).
    target_path.append(".").append(place).append(".").append(*name);
  }
  // NOTE: the rule is named before its body is built, so that the body
  // (and anything it holds) may refer to it: recursion.
  const uint32_t rule = b_.fresh_rule(target == "#" ? "root" : target.substr(2));
  references_.emplace(std::string(target), rule);
  result<grammar_element> body = compile(schema, target_path);
  if (!body) return body.error();
  b_.define(rule, {{*body}});
  return grammar_builder::ref(rule);
}

} // namespace kvactor::model
