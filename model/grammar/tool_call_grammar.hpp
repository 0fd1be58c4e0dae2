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

// One call of one of `functions`, or with `parallel` one or more.
result<grammar> tool_call_grammar(const std::vector<tool_function>& functions,
                                  tool_call_format format, bool parallel);

// The constraint text of constraint_kind tool_calls:
//   {"format": "json" | "hermes", "parallel": bool,
//    "functions": [{"name": ..., "parameters": {...}}, ...]}
std::string tool_call_spec(const std::vector<tool_function>& functions, tool_call_format format,
                           bool parallel);
result<grammar> tool_call_grammar_of_spec(std::string_view spec);

} // namespace kvactor::model
