#include "net/openai_tools.hpp"

#include "base/json.hpp"

#include <algorithm>

namespace kvactor::net::openai {

namespace od = simdjson::ondemand;

std::optional<api_error> read_tools(od::value v, fields& f) {
  od::array a;
  std::string_view raw;
  if (v.get_array().get(a) || a.raw_json().get(raw)) return must_be("tools", "an array of tools");
  f.tools.clear();
  // NOTE: raw_json() consumed the array; it is read again from its text.
  simdjson::dom::parser parser;
  simdjson::dom::array tools;
  if (parser.parse(raw).get(tools)) return must_be("tools", "an array of tools");
  for (simdjson::dom::element tool : tools) {
    const std::string where = "tools[" + std::to_string(f.tools.size()) + "]";
    std::string_view type, name;
    simdjson::dom::object function;
    if (tool["type"].get(type) || type != "function" || tool["function"].get(function))
      return invalid("tools", where + " must be {\"type\": \"function\", \"function\": {...}}");
    if (function["name"].get(name) || name.empty())
      return invalid("tools", where + ".function.name must be a non-empty string");
    model::tool_function t{std::string(name), {}};
    simdjson::dom::element parameters;
    if (!function["parameters"].get(parameters) && !parameters.is_null()) {
      if (!parameters.is_object())
        return invalid("tools", where + ".function.parameters must be a JSON Schema object");
      t.parameters = simdjson::minify(parameters);
    }
    if (std::ranges::any_of(f.tools, [&](const auto& x) { return x.name == t.name; }))
      return invalid("tools", where + ": a second function named '" + t.name + "'");
    f.tools.push_back(std::move(t));
  }
  f.chat.tools_json = f.tools.empty() ? std::string() : simdjson::minify(tools);
  return std::nullopt;
}

std::optional<api_error> read_tool_choice(od::value v, fields& f) {
  std::string_view choice;
  if (!v.get_string().get(choice)) {
    if (choice != "none" && choice != "auto" && choice != "required")
      return invalid("tool_choice", "tool_choice must be none, auto, required or "
                                    "{\"type\": \"function\", \"function\": {\"name\": ...}}");
    f.tool_choice = std::string(choice);
    f.named_tool = false;
    return std::nullopt;
  }
  std::string_view name;
  if (v["function"]["name"].get_string().get(name))
    return must_be("tool_choice", "none, auto, required or {\"type\": \"function\", "
                                  "\"function\": {\"name\": ...}}");
  f.tool_choice = std::string(name);
  f.named_tool = true;
  return std::nullopt;
}

std::variant<std::string, api_error> read_tool_calls(od::value v, const std::string& where) {
  od::array a;
  std::string_view raw;
  if (v.get_array().get(a) || a.raw_json().get(raw))
    return must_be(where, "an array of tool calls");
  simdjson::dom::parser parser, arguments_parser;
  simdjson::dom::array calls;
  if (parser.parse(raw).get(calls)) return must_be(where, "an array of tool calls");
  std::string out = "[";
  size_t index = 0;
  for (simdjson::dom::element call : calls) {
    const std::string at = where + "[" + std::to_string(index++) + "]";
    std::string_view id, name, arguments;
    simdjson::dom::element parsed;
    if (call["function"]["name"].get(name) || call["function"]["arguments"].get(arguments))
      return invalid(where, at + " needs function.name and function.arguments (a string)");
    if (arguments_parser.parse(arguments).get(parsed) || !parsed.is_object())
      return invalid(where, at + ".function.arguments must be a JSON object in a string");
    if (call["id"].get(id)) id = "";
    if (out.size() > 1) out += ',';
    out += "{\"id\":" + json::quote(id) +
           ",\"type\":\"function\",\"function\":{\"name\":" + json::quote(name) +
           ",\"arguments\":" + simdjson::minify(parsed) + "}}";
  }
  return out + "]";
}

std::variant<std::optional<model::tool_call_format>, api_error>
apply_tool_choice(fields& f, model::tool_call_format format) {
  const std::string choice = f.tool_choice.value_or(f.tools.empty() ? "none" : "auto");
  if (choice == "none") return std::optional<model::tool_call_format>();
  if (f.tools.empty()) return invalid("tool_choice", "tool_choice '" + choice + "' needs tools");
  if (choice == "auto") {
    // NOTE: text, or calls held to their schemas once the answer begins
    // one; a request constrained otherwise keeps its constraint, and its
    // answer is read for calls when it ends.
    if (f.params.constraint.empty())
      f.params.constraint = {
        constraint_kind::tool_calls,
        model::tool_call_spec(f.tools, format, {.parallel = f.parallel_tool_calls, .lazy = true}),
        {}};
    return std::optional<model::tool_call_format>(format);
  }
  std::vector<model::tool_function> callable = f.tools;
  if (f.named_tool) {
    std::erase_if(callable, [&](const auto& t) { return t.name != choice; });
    if (callable.empty())
      return invalid("tool_choice", "tool_choice names '" + choice + "', which is not in tools");
  }
  if (!f.params.constraint.empty())
    return invalid("tool_choice", "tool_choice '" + choice +
                                    "' constrains the answer; it cannot take another constraint "
                                    "(response_format, structured_outputs, ...) besides");
  f.params.constraint = {
    constraint_kind::tool_calls,
    model::tool_call_spec(callable, format,
                          {.parallel = f.parallel_tool_calls && !f.named_tool}),
    {}};
  return std::optional<model::tool_call_format>(format);
}

} // namespace kvactor::net::openai
