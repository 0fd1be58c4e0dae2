#include "model/grammar/tool_call_grammar.hpp"

#include "base/json.hpp"
#include "model/grammar/json_schema_compiler.hpp"

#include <simdjson.h>

#include <memory>

namespace kvactor::model {

std::string_view to_string(tool_call_format f) {
  return f == tool_call_format::hermes ? "hermes" : "json";
}

result<grammar> tool_call_grammar(const std::vector<tool_function>& functions,
                                  tool_call_format format, bool parallel) {
  if (functions.empty()) return error_in("tool_calls", "no function to call");
  grammar_builder b;
  json_grammar_parts parts(b);
  // NOTE: each schema's DOM lives while its compiler resolves its $refs.
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers;
  std::vector<grammar_sequence> calls;
  for (const tool_function& f : functions) {
    grammar_element arguments = parts.object();
    if (!f.parameters.empty()) {
      auto& parser = *parsers.emplace_back(std::make_unique<simdjson::dom::parser>());
      simdjson::dom::element root;
      if (parser.parse(f.parameters).get(root))
        return error_in("tool_calls", "function '" + f.name + "': parameters are not JSON");
      json_schema_compiler compiler(b, root);
      auto schema = compiler.reference("#", "schema");
      if (!schema)
        return error_in("tools", "function '" + f.name + "': " + schema.error().message);
      arguments = *schema;
    }
    const std::string head = format == tool_call_format::hermes ? "<tool_call>\n" : "";
    const std::string key = format == tool_call_format::hermes ? "arguments" : "parameters";
    grammar_sequence call =
      b.literal(head + "{\"name\": " + json::quote(f.name) + ", \"" + key + "\": ");
    call.push_back(arguments);
    const grammar_sequence tail =
      b.literal(format == tool_call_format::hermes ? "}\n</tool_call>" : "}");
    call.insert(call.end(), tail.begin(), tail.end());
    calls.push_back(std::move(call));
  }
  const grammar_element call = b.any_of("call", std::move(calls));
  // NOTE: a fresh name: a schema's own top rule may be called "root".
  const uint32_t root = b.fresh_rule("tool-calls");
  if (!parallel) {
    b.define(root, {{call}});
  } else {
    grammar_sequence more = b.literal(format == tool_call_format::hermes ? "\n" : "; ");
    more.push_back(call);
    auto rest = b.repeat(more, 0, -1);
    if (!rest) return rest.error();
    b.define(root, {{call, *rest}});
  }
  return b.build(root);
}

std::string tool_call_spec(const std::vector<tool_function>& functions, tool_call_format format,
                           bool parallel) {
  std::string out = "{\"format\":" + json::quote(to_string(format)) +
                    ",\"parallel\":" + (parallel ? "true" : "false") + ",\"functions\":[";
  for (size_t i = 0; i < functions.size(); ++i) {
    out += i ? "," : "";
    out += "{\"name\":" + json::quote(functions[i].name) + ",\"parameters\":" +
           (functions[i].parameters.empty() ? "null" : functions[i].parameters) + "}";
  }
  return out + "]}";
}

result<grammar> tool_call_grammar_of_spec(std::string_view spec) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::padded_string text(spec);
  std::string_view format;
  bool parallel = false;
  simdjson::dom::array list;
  if (parser.parse(text).get(root) || root["format"].get(format) ||
      root["parallel"].get(parallel) || root["functions"].get(list))
    return error_in("tool_calls", "the constraint must be a JSON object with format, "
                                    "parallel and functions");
  if (format != "json" && format != "hermes")
    return error_in("tool_calls", "format must be json or hermes");
  std::vector<tool_function> functions;
  for (simdjson::dom::element f : list) {
    std::string_view name;
    simdjson::dom::element parameters;
    if (f["name"].get(name) || f["parameters"].get(parameters))
      return error_in("tool_calls", "each function needs a name and parameters");
    functions.push_back(
      {std::string(name), parameters.is_null() ? std::string() : simdjson::minify(parameters)});
  }
  return tool_call_grammar(
    functions, format == "hermes" ? tool_call_format::hermes : tool_call_format::json, parallel);
}

} // namespace kvactor::model
