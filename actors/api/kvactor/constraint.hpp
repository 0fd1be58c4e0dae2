#pragma once
// What a generation's text must be (structured outputs): the runtime
// compiles the constraint when it admits the request (a constraint it
// cannot compile is refused as invalid_field, naming the construct) and
// lets the sampler draw only tokens that keep the text inside the
// constraint's language; once nothing but the end may follow, the choice
// ends ("stop").

#include <cstdint>
#include <string>
#include <vector>

namespace kvactor {

enum class constraint_kind : uint8_t {
  none,
  json_object, // any JSON object
  json_schema, // text: a JSON Schema (as JSON)
  regex,       // text: a regular expression the whole text matches
  choice,      // choices: the text is one of them
  grammar,     // text: a GBNF grammar (llama.cpp's notation), from `root`
  tool_calls,  // text: {"format": "json" | "hermes", "parallel": bool, "functions":
               // [{"name": ..., "parameters": JSON Schema}]}: calls as the chat
               // template's format writes them (model/grammar/tool_call_grammar.hpp)
};

struct output_constraint {
  constraint_kind kind = constraint_kind::none;
  std::string text;
  std::vector<std::string> choices;
  bool empty() const { return kind == constraint_kind::none; }
  bool operator==(const output_constraint&) const = default;
};

} // namespace kvactor
