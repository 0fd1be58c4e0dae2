#pragma once
// Tool calls as grammars: what a chat model writes to call one of the
// request's functions, in the format its chat template taught it, with the
// arguments constrained by the function's JSON Schema — so a call forced by
// tool_choice "required" or a named function always parses.
//
//   json    (Llama 3.1+)     {"name": "get_weather", "parameters": {...}}
//                            several: joined by "; "
//   hermes  (Qwen2.5, Qwen3) <tool_call>\n{"name": "get_weather", "arguments": {...}}\n</tool_call>
//                            several: one block after another, "\n" between
//
// A lazy grammar (tool_choice auto) lets the answer be text instead, as
// long as it does not begin a call: after any whitespace, either the calls
// or text that leaves the call's opening (tool_call_trigger) before its end.
// Once an answer has begun a call, the call is held to its function's
// schema like a forced one.

#include "base/result.hpp"
#include "model/grammar/grammar.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

enum class tool_call_format : uint8_t { json, hermes };

std::string_view to_string(tool_call_format f);

struct tool_function {
  std::string name;
  std::string parameters; // a JSON Schema (JSON text); "" : any object
};

struct tool_call_options {
  bool parallel = false; // one or more calls, else one
  bool lazy = false;     // or text that does not begin a call
};

// What every call of the format begins with: "<tool_call>", "{\"name\"".
std::string_view tool_call_trigger(tool_call_format format);

// Calls of `functions` in `format`.
result<grammar> tool_call_grammar(const std::vector<tool_function>& functions,
                                  tool_call_format format, tool_call_options options);

// The constraint text of constraint_kind tool_calls:
//   {"format": "json" | "hermes", "parallel": bool, "lazy": bool (optional),
//    "functions": [{"name": ..., "parameters": {...}}, ...]}
std::string tool_call_spec(const std::vector<tool_function>& functions, tool_call_format format,
                           tool_call_options options);
result<grammar> tool_call_grammar_of_spec(std::string_view spec);

} // namespace kvactor::model
