#include "net/constraint_fields.hpp"

#include <array>

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace {

std::optional<field_fault> must_be(std::string_view what) {
  return field_fault{true, std::string(what)};
}

// Stores `c`, unless the request has a constraint already.
std::optional<field_fault> store(std::string_view field, output_constraint c,
                                 generate_request& req) {
  if (!req.constraint.empty())
    return field_fault{false, std::string(field) +
                                ": a request takes one output constraint, and it has one already"};
  req.constraint = std::move(c);
  return std::nullopt;
}

// A schema: a JSON object, or a string holding one.
std::optional<std::string> schema_text(od::value v) {
  std::string_view s;
  if (!v.get_string().get(s)) return std::string(s);
  od::object o;
  std::string_view raw;
  if (v.get_object().get(o) || o.raw_json().get(raw)) return std::nullopt;
  return std::string(raw);
}

std::optional<std::string> string_of(od::value v) {
  std::string_view s;
  if (v.get_string().get(s)) return std::nullopt;
  return std::string(s);
}

std::optional<std::vector<std::string>> strings_of(od::value v) {
  od::array a;
  if (v.get_array().get(a)) return std::nullopt;
  std::vector<std::string> out;
  for (auto item : a) {
    std::string_view s;
    if (item.get_string().get(s)) return std::nullopt;
    out.emplace_back(s);
  }
  return out;
}

// One constraint of `kind` from `v` as the fields of that kind carry it.
std::optional<field_fault> read_kind(std::string_view field, constraint_kind kind, od::value v,
                                     generate_request& req) {
  output_constraint c{kind, {}, {}};
  switch (kind) {
  case constraint_kind::json_schema: {
    auto text = schema_text(v);
    if (!text) return must_be("a JSON Schema (an object, or a string holding one)");
    c.text = std::move(*text);
    break;
  }
  case constraint_kind::regex:
  case constraint_kind::grammar:
  case constraint_kind::tool_calls: {
    auto text = string_of(v);
    if (!text) return must_be("a string");
    c.text = std::move(*text);
    break;
  }
  case constraint_kind::choice: {
    auto choices = strings_of(v);
    if (!choices) return must_be("an array of strings");
    c.choices = std::move(*choices);
    break;
  }
  case constraint_kind::json_object: {
    bool on = false;
    if (v.get_bool().get(on)) return must_be("true or false");
    if (!on) return std::nullopt;
    break;
  }
  case constraint_kind::none: return std::nullopt;
  }
  return store(field, std::move(c), req);
}

struct named_kind {
  std::string_view key;
  constraint_kind kind;
};
constexpr std::array<named_kind, 6> top_level{{
  {"guided_json", constraint_kind::json_schema},
  {"guided_regex", constraint_kind::regex},
  {"guided_choice", constraint_kind::choice},
  {"guided_grammar", constraint_kind::grammar},
  {"json_schema", constraint_kind::json_schema},
  {"grammar", constraint_kind::grammar},
}};
constexpr std::array<named_kind, 5> structured{{
  {"json", constraint_kind::json_schema},
  {"regex", constraint_kind::regex},
  {"choice", constraint_kind::choice},
  {"grammar", constraint_kind::grammar},
  {"json_object", constraint_kind::json_object},
}};

// OpenAI's response_format.
std::optional<field_fault> read_response_format(od::value v, generate_request& req) {
  std::string_view type;
  if (v["type"].get_string().get(type)) return must_be("an object with a type");
  if (type == "text") return std::nullopt;
  if (type == "json_object")
    return store("response_format", {constraint_kind::json_object, {}, {}}, req);
  if (type != "json_schema")
    return field_fault{false, "response_format type '" + std::string(type) +
                                "' is not supported (text, json_object or json_schema are)"};
  od::object spec;
  if (v["json_schema"].get_object().get(spec))
    return field_fault{false, "response_format json_schema needs a json_schema object"};
  od::value schema;
  if (spec["schema"].get(schema))
    return field_fault{false, "response_format.json_schema needs a schema"};
  auto text = schema_text(schema);
  if (!text)
    return field_fault{false, "response_format.json_schema.schema must be a JSON Schema object"};
  return store("response_format", {constraint_kind::json_schema, std::move(*text), {}}, req);
}

} // namespace

bool is_constraint_field(std::string_view key) {
  if (key == "structured_outputs" || key == "response_format") return true;
  for (const named_kind& k : top_level)
    if (k.key == key) return true;
  return false;
}

std::optional<field_fault> read_constraint_field(std::string_view key, od::value v,
                                                 generate_request& req) {
  for (const named_kind& k : top_level)
    if (k.key == key) return read_kind(key, k.kind, v, req);
  if (key == "response_format") return read_response_format(v, req);
  od::object o;
  if (v.get_object().get(o)) return must_be("an object");
  for (auto field : o) {
    std::string_view name;
    od::value value;
    if (field.unescaped_key().get(name) || field.value().get(value)) return must_be("an object");
    bool null = false;
    if (!value.is_null().get(null) && null) continue;
    bool known = false;
    for (const named_kind& k : structured)
      if (k.key == name) {
        known = true;
        const std::string inner = std::string(key) + "." + std::string(name);
        if (auto fault = read_kind(inner, k.kind, value, req)) {
          if (fault->wrong_type) fault->message = inner + " must be " + fault->message;
          return field_fault{false, std::move(fault->message)};
        }
      }
    if (!known)
      return field_fault{false, std::string(key) + "." + std::string(name) +
                                  " is not supported (json, regex, choice, grammar or "
                                  "json_object are)"};
  }
  return std::nullopt;
}

} // namespace kvactor::net
