#include "model/grammar/tool_call_grammar.hpp"

#include "base/json.hpp"
#include "model/grammar/json_schema_compiler.hpp"

#include <simdjson.h>

#include <memory>

namespace kvactor::model {

std::string_view to_string(tool_call_format f) {
  return f == tool_call_format::hermes ? "hermes" : "json";
}

std::string_view tool_call_trigger(tool_call_format format) {
  return format == tool_call_format::hermes ? "<tool_call>" : "{\"name\"";
}

namespace {

// Text that leaves `trigger` before its end (or ends first), its first byte
// no whitespace: free_k ::= "" | [^t_k] any* | t_k free_{k+1}.
result<grammar_element> text_not_beginning(grammar_builder& b, std::string_view trigger) {
  byte_set every;
  every.add_range(0, 255);
  auto rest = b.repeat({b.bytes(every)}, 0, -1);
  if (!rest) return rest.error();
  grammar_element next{};
  for (size_t k = trigger.size(); k-- > 0;) {
    byte_set other;
    for (unsigned c = 0; c < 256; ++c)
      if (c != uint8_t(trigger[k]) && (k > 0 || std::string_view(" \t\r\n").find(char(c)) ==
                                                   std::string_view::npos))
        other.add(uint8_t(c));
    std::vector<grammar_sequence> alternatives{{}, {b.bytes(other), *rest}};
    if (k + 1 < trigger.size()) alternatives.push_back({b.byte(uint8_t(trigger[k])), next});
    next = b.any_of("free-text", std::move(alternatives));
  }
  return next;
}

} // namespace

result<grammar> tool_call_grammar(const std::vector<tool_function>& functions,
                                  tool_call_format format, tool_call_options options) {
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
  if (!options.parallel) {
    b.define(root, {{call}});
  } else {
    grammar_sequence more = b.literal(format == tool_call_format::hermes ? "\n" : "; ");
    more.push_back(call);
    auto rest = b.repeat(more, 0, -1);
    if (!rest) return rest.error();
    b.define(root, {{call, *rest}});
  }
  if (!options.lazy) return b.build(root);
  byte_set space;
  for (char c : std::string_view(" \t\r\n")) space.add(uint8_t(c));
  auto leading = b.repeat({b.bytes(space)}, 0, -1);
  auto text = text_not_beginning(b, tool_call_trigger(format));
  if (!leading) return leading.error();
  if (!text) return text.error();
  const uint32_t answer = b.fresh_rule("answer");
  b.define(answer, {{*leading, grammar_builder::ref(root)}, {*leading, *text}});
  return b.build(answer);
}

std::string tool_call_spec(const std::vector<tool_function>& functions, tool_call_format format,
                           tool_call_options options) {
  std::string out = "{\"format\":" + json::quote(to_string(format)) +
                    ",\"parallel\":" + (options.parallel ? "true" : "false");
  if (options.lazy) out += ",\"lazy\":true";
  out += ",\"functions\":[";
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
  tool_call_options options;
  simdjson::dom::array list;
  if (parser.parse(text).get(root) || root["format"].get(format) ||
      root["parallel"].get(options.parallel) || root["functions"].get(list))
    return error_in("tool_calls", "the constraint must be a JSON object with format, "
                                    "parallel and functions");
  if (simdjson::dom::element lazy; !root["lazy"].get(lazy) && lazy.get(options.lazy))
    return error_in("tool_calls", "lazy must be true or false");
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
    functions, format == "hermes" ? tool_call_format::hermes : tool_call_format::json, options);
}

} // namespace kvactor::model
