#pragma once
// openai_tools: a chat request's tools as OpenAI's API sends them — the
// tools array, tool_choice and parallel_tool_calls, and the history's
// assistant tool_calls — read for the chat template (which renders them)
// and for the runtime: tool_choice "required" or a named function becomes
// a tool_calls constraint in the template's format, so the call always
// parses; "auto" a lazy one (text, or calls once the answer begins one),
// unless the request carries another constraint; answers are read for calls.
// Internal to net/.

#include "net/openai_fields.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <variant>

namespace kvactor::net::openai {

// tools: [{"type": "function", "function": {"name", "description"?,
// "parameters"?}}, ...]
std::optional<api_error> read_tools(simdjson::ondemand::value v, fields& f);
// tool_choice: "none" | "auto" | "required" | {"type": "function",
// "function": {"name": ...}}
std::optional<api_error> read_tool_choice(simdjson::ondemand::value v, fields& f);
// An assistant message's tool_calls, as the template reads them (their
// arguments, a JSON string in the API, as objects).
std::variant<std::string, api_error> read_tool_calls(simdjson::ondemand::value v,
                                                     const std::string& where);

// Once the body is read: the tool_choice's constraint on f.params, and the
// format the answers are read in (nullopt: none are).
std::variant<std::optional<model::tool_call_format>, api_error>
apply_tool_choice(fields& f, model::tool_call_format format);

} // namespace kvactor::net::openai
