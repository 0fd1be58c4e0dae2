// Strings of a schema (length, pattern, format) and its enum / const values.

#include "model/grammar/json_schema_compiler.hpp"
#include "base/json.hpp"
#include "model/grammar/json_schema_formats.hpp"
#include "model/grammar/regex_grammar.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <unordered_set>
#include <vector>

namespace kvactor::model {

using simdjson::dom::element_type;

namespace {

void write_json(simdjson::dom::element value, std::string& out) {
  switch (value.type()) {
  case element_type::OBJECT: {
    out += '{';
    bool first = true;
    const simdjson::dom::object o = value.get_object().value_unsafe();
    for (const simdjson::dom::key_value_pair& kv : o) {
      out += first ? "" : ",";
      first = false;
      out += json::quote(kv.key);
      out += ':';
      write_json(kv.value, out);
    }
    out += '}';
    return;
  }
  case element_type::ARRAY: {
    out += '[';
    bool first = true;
    const simdjson::dom::array a = value.get_array().value_unsafe();
    for (simdjson::dom::element e : a) {
      if (!first) out += ',';
      first = false;
      write_json(e, out);
    }
    out += ']';
    return;
  }
  case element_type::STRING: out += json::quote(value.get_string().value_unsafe()); return;
  case element_type::INT64: out += std::to_string(value.get_int64().value_unsafe()); return;
  case element_type::UINT64: out += std::to_string(value.get_uint64().value_unsafe()); return;
  case element_type::DOUBLE: {
    // NOTE: the shortest text that reads back as the same double ("0.1",
    // "1e+100", "3" for 3.0): all of them JSON numbers.
    char text[32];
    const auto [end, ec] =
      std::to_chars(text, text + sizeof text, value.get_double().value_unsafe());
    out.append(text, end);
    return;
  }
  case element_type::BOOL: out += value.get_bool().value_unsafe() ? "true" : "false"; return;
  case element_type::NULL_VALUE: out += "null"; return;
  }
}

bool is_of_type(simdjson::dom::element value, std::string_view type) {
  switch (value.type()) {
  case element_type::OBJECT: return type == "object";
  case element_type::ARRAY: return type == "array";
  case element_type::STRING: return type == "string";
  case element_type::INT64:
  case element_type::UINT64: return type == "integer" || type == "number";
  case element_type::DOUBLE: {
    const double d = value.get_double().value_unsafe();
    return type == "number" || (type == "integer" && d == std::floor(d));
  }
  case element_type::BOOL: return type == "boolean";
  case element_type::NULL_VALUE: return type == "null";
  }
  return false;
}

} // namespace

std::string canonical_json(simdjson::dom::element value) {
  std::string out;
  write_json(value, out);
  return out;
}

result<grammar_element> json_schema_compiler::values(simdjson::dom::object s,
                                                     const std::vector<std::string_view>& types,
                                                     const std::string& path) {
  std::vector<simdjson::dom::element> candidates;
  const std::optional<simdjson::dom::element> listed = member(s, "enum");
  const std::optional<simdjson::dom::element> constant = member(s, "const");
  if (listed) {
    simdjson::dom::array list;
    if (listed->get_array().get(list)) return schema_error(path, "enum must be a list of values");
    for (simdjson::dom::element e : list) candidates.push_back(e);
  } else {
    candidates.push_back(*constant);
  }
  // NOTE: each value in one written form, compact and canonically escaped:
  // what a model writes for an enum is then the schema's own text.
  // NOTE: a set finds repeats: a client's enum may hold tens of thousands
  // of values, and a search of the list for each made that quadratic (2.4 s
  // for 50,000).
  std::vector<std::string> texts;
  std::unordered_set<std::string> seen;
  const std::string wanted = constant ? canonical_json(*constant) : std::string();
  for (simdjson::dom::element e : candidates) {
    std::string text = canonical_json(e);
    const bool typed =
      std::ranges::any_of(types, [&](std::string_view t) { return is_of_type(e, t); });
    if ((types.empty() || typed) && (!constant || text == wanted) && seen.insert(text).second)
      texts.push_back(std::move(text));
  }
  if (texts.empty())
    return schema_error(path, std::string(listed ? "enum" : "const") +
                                " accepts nothing (no value of the schema's types)");
  std::vector<grammar_sequence> alternatives;
  for (const std::string& text : texts) alternatives.push_back(b_.literal(text));
  return b_.any_of(listed ? "enum" : "const", std::move(alternatives));
}

result<grammar_element> json_schema_compiler::string(simdjson::dom::object s,
                                                     const std::string& path) {
  result<int64_t> min = schema_count(s, "minLength", path);
  if (!min) return min.error();
  result<int64_t> max = schema_count(s, "maxLength", path);
  if (!max) return max.error();
  const std::optional<simdjson::dom::element> pattern = member(s, "pattern");
  const std::optional<simdjson::dom::element> format = member(s, "format");
  // NOTE: a length and a pattern (or a format) would need the two
  // languages' intersection, which is not built: refused, not loosened.
  const char* length = *min >= 0 ? "minLength" : *max >= 0 ? "maxLength" : nullptr;
  if (pattern && format) return schema_error(path, "format together with pattern is not supported");
  if (length && (pattern || format))
    return schema_error(path, std::string(length) + " together with " +
                                (pattern ? "pattern" : "format") + " is not supported");
  grammar_element characters;
  if (pattern) {
    std::string_view text;
    if (pattern->get_string().get(text)) return schema_error(path, "pattern must be a string");
    // NOTE: the whole string matches the pattern, where JSON Schema only
    // asks for a match somewhere in it: a subset, and what clients mean.
    result<grammar_element> e = add_regex(b_, text, regex_options{.json_string_characters = true});
    if (!e) return schema_error(path, "pattern: " + e.error().message);
    characters = *e;
  } else if (format) {
    std::string_view name;
    if (format->get_string().get(name)) return schema_error(path, "format must be a string");
    const std::optional<grammar_element> e = add_string_format(b_, name);
    if (!e) return schema_error(path, "format '" + std::string(name) + "' is not supported");
    characters = *e;
  } else if (length) {
    if (*max >= 0 && *min > *max)
      return schema_error(path, "minLength over maxLength accepts nothing");
    // NOTE: a length counts characters, an escape or an escaped surrogate
    // pair one each, as validators count them.
    result<grammar_element> e = b_.repeat({parts_.character()}, std::max<int64_t>(*min, 0), *max);
    if (!e) return schema_error(path, std::string(length) + ": " + e.error().message);
    characters = *e;
  } else {
    return parts_.string();
  }
  return b_.any_of("string", {{parts_.quote(), characters, parts_.quote()}});
}

} // namespace kvactor::model
