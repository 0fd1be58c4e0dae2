#include "model/chat/tool_calls.hpp"

#include "model/chat/tool_call_reader.hpp"

#include <simdjson.h>

namespace kvactor::model {

namespace {

constexpr std::string_view open_tag = "<tool_call>", close_tag = "</tool_call>";

std::string_view trim_start(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  return first == std::string_view::npos ? std::string_view() : s.substr(first);
}

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// One call's JSON object: {"name": ..., "arguments" | "parameters": {...}}.
// Checked here; read by the reader a stream uses, so that the arguments are
// the text its fragments join to.
std::optional<tool_call> parse_call(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  const simdjson::padded_string text(json);
  if (parser.parse(text).get(o)) return std::nullopt;
  std::string_view name;
  simdjson::dom::object arguments;
  if (o["name"].get(name) || (o["arguments"].get(arguments) && o["parameters"].get(arguments)))
    return std::nullopt;
  tool_call_reader reader;
  reader.feed(json);
  const tool_call_reader::call& call = reader.calls().front();
  return tool_call{call.name, call.arguments};
}

} // namespace

std::optional<std::vector<tool_call>> parse_tool_calls(std::string_view text,
                                                       tool_call_format format) {
  std::vector<tool_call> calls;
  text = trim(text);
  while (!text.empty()) {
    std::string_view one;
    if (format == tool_call_format::hermes) {
      if (!text.starts_with(open_tag)) return std::nullopt;
      const size_t end = text.find(close_tag);
      if (end == std::string_view::npos) return std::nullopt;
      one = text.substr(open_tag.size(), end - open_tag.size());
      text = trim(text.substr(end + close_tag.size()));
    } else {
      // NOTE: calls are objects joined by ';' — found by trying each ';'
      // that ends a whole object, since strings may hold one.
      size_t cut = text.size();
      for (size_t at = text.find(';'); at != std::string_view::npos; at = text.find(';', at + 1))
        if (parse_call(trim(text.substr(0, at)))) {
          cut = at;
          break;
        }
      one = text.substr(0, cut);
      text = cut < text.size() ? trim(text.substr(cut + 1)) : std::string_view();
    }
    auto call = parse_call(trim(one));
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

bool may_be_tool_calls(std::string_view text, tool_call_format format) {
  text = trim_start(text);
  if (text.empty()) return true;
  if (format == tool_call_format::json) return text.front() == '{';
  return text.size() <= open_tag.size() ? open_tag.starts_with(text) : text.starts_with(open_tag);
}

bool begins_tool_call(std::string_view text, tool_call_format format) {
  return trim_start(text).starts_with(tool_call_trigger(format));
}

tool_call_format tool_call_format_of(std::string_view template_text) {
  return template_text.find(open_tag) != std::string_view::npos ? tool_call_format::hermes
                                                                : tool_call_format::json;
}

} // namespace kvactor::model
