#pragma once
// Tool calls in a chat model's output: the calls a whole answer makes, in
// the format of its chat template (model/grammar/tool_call_grammar.hpp),
// and while it streams whether its text so far may still become one.
//
//   hermes  <tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>  (one or more)
//   json    {"name": "f", "parameters": {"x": 1}}     (or "arguments"; several joined by ";")

#include "model/grammar/tool_call_grammar.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

struct tool_call {
  std::string name;
  std::string arguments; // a JSON object, compact
};

// The calls `text` makes, when it is nothing but calls (whitespace around
// them aside); nullopt when it is anything else.
std::optional<std::vector<tool_call>> parse_tool_calls(std::string_view text,
                                                       tool_call_format format);

// Whether `text`, a prefix of an answer, may still turn out to be calls.
bool may_be_tool_calls(std::string_view text, tool_call_format format);

// Whether `text` (after any whitespace) has begun a call: under a calls
// grammar, lazy or forced, the answer is then calls.
bool begins_tool_call(std::string_view text, tool_call_format format);

// The format a chat template's text teaches: hermes when it writes
// <tool_call> blocks, else json.
tool_call_format tool_call_format_of(std::string_view template_text);

} // namespace kvactor::model
