#pragma once
// openai_fields: the request bodies' fields as read, shared by the parsers of
// /v1/completions (openai_request.cpp) and /v1/chat/completions
// (openai_chat.cpp). Internal to net/.

#include "net/openai_request.hpp"

#include <simdjson.h>

#include <functional>

namespace kvactor::net::openai {

api_error invalid(std::string_view field, std::string message);
api_error must_be(std::string_view field, std::string_view what);
api_error unsupported(std::string_view field, std::string_view what);

using prompt_list = std::vector<std::variant<std::string, std::vector<int32_t>>>;

struct fields {
  std::optional<prompt_list> prompts;
  std::optional<std::vector<model::chat_message>> messages;
  model::chat_options chat;
  generate_request params;
  std::optional<std::string> model;
  bool stream = false;
  std::optional<bool> include_usage;
  bool return_token_ids = false;
  // A chat's logprobs (true: each token's) and top_logprobs (how many
  // alternatives), which read_body turns into params.logprobs.
  bool chat_logprobs = false;
  int32_t chat_top_logprobs = 0;
  // A chat's tools (as the template renders them, and as a constraint may
  // call them), tool_choice (none, auto, required, or a function's name)
  // and parallel_tool_calls.
  std::vector<model::tool_function> tools;
  std::optional<std::string> tool_choice;
  bool named_tool = false;
  bool parallel_tool_calls = true;
};

// Reads `body` as one JSON object, handing each field to on_field in order;
// the first error (from on_field, or for a body that is not one JSON object
// or has content after it) stops the reading.
using field_reader =
  std::function<std::optional<api_error>(std::string_view key, simdjson::ondemand::value v)>;
std::optional<api_error> read_object(std::string_view body, const field_reader& on_field);

// An array of token ids (each in [0, 2^31)), or nullopt.
std::optional<std::vector<int32_t>> token_ids(simdjson::ondemand::array a);

// The fields only chat requests have (messages, logprobs as a boolean,
// tools, ...), which read_chat_field reads; an error names the field.
bool is_chat_field(std::string_view key);
std::optional<api_error> read_chat_field(std::string_view key, simdjson::ondemand::value v,
                                         fields& f);

// The body's fields, read and checked over the front door's defaults and
// the model's (`defaults`), or the error naming the one at fault.
std::variant<fields, api_error> read_body(std::string_view body, uint64_t draw_seed, bool chat,
                                          const model::sampling_defaults& defaults);

// One generate_request per prompt of f.
completion_request request_of(fields& f);

} // namespace kvactor::net::openai
