#pragma once
// The OpenAI-compatible request bodies, pure: POST /v1/completions and
// /v1/chat/completions parsed and validated into one generate_request per
// prompt (a chat's messages rendered by the model's chat template), and the
// errors in OpenAI's shape with their HTTP status. No sockets here.
//
//   {"model":"m","prompt":"Hi" | [1,2,3] | ["a","b"] | [[1,2],[3]],
//    "max_tokens":16,"temperature":1,"top_p":1,"top_k":-1,"seed":7,"min_p":0.05,
//    "presence_penalty":0.5,"frequency_penalty":0.5,"repetition_penalty":1.1,
//    "logit_bias":{"50256":-100},"stop_token_ids":[2],"min_tokens":4,
//    "stop":"\n" | ["\n","."],"stream":true,"stream_options":{"include_usage":true}}
//   {"model":"m","messages":[{"role":"user","content":"Hi"}],"max_completion_tokens":64,…}

#include "kvactor/kvactor.hpp"
#include "model/chat_template.hpp"
#include "model/sampling_defaults.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kvactor::net {

// An error as OpenAI's API reports one: {"error":{"message","type","param","code"}}.
struct api_error {
  api_error(int status_, std::string message_, std::string type_ = "invalid_request_error",
            std::optional<std::string> param_ = std::nullopt,
            std::optional<std::string> code_ = std::nullopt)
    : status(status_), message(std::move(message_)), type(std::move(type_)),
      param(std::move(param_)), code(std::move(code_)) {}

  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::optional<std::string> param; // the field at fault
  std::optional<std::string> code;
};

std::string format_api_error(const api_error& e);

struct completion_request {
  std::optional<std::string> model;
  std::vector<generate_request> prompts; // a batch: one per prompt, the same parameters
  bool stream = false;
  bool include_usage = false; // stream_options.include_usage
  bool return_token_ids = false; // as vLLM: each choice (and chunk) carries its token ids
  // A chat with tools: its answers are read for calls in this format.
  std::optional<model::tool_call_format> tool_calls;
  // tool_choice named a function: its call ends with finish_reason "stop",
  // as OpenAI's forced calls do ("tool_calls" otherwise).
  bool named_tool = false;
  // The answer's calls are held to the tools' grammar (tool_choice required
  // or named: the answer is calls; auto without another constraint: calls
  // once it begins one), so a stream sends each call as it is written.
  bool constrained_calls = false;
};

// Parses a /v1/completions body. `draw_seed` gives the seed of a request
// that names none (OpenAI's outputs differ from call to call then);
// `defaults` (the model's generation_config.json) the sampling fields it
// leaves out, where set, else OpenAI's.
std::variant<completion_request, api_error>
parse_completion_request(std::string_view body, uint64_t draw_seed,
                         const model::sampling_defaults& defaults = {});

inline constexpr int32_t default_chat_max_tokens = 256;

// Parses a /v1/chat/completions body into one prompt, the messages rendered
// by `chat` (its end-of-turn text added to the stop strings); `defaults` as
// for completions.
std::variant<completion_request, api_error>
parse_chat_request(std::string_view body, uint64_t draw_seed, const model::chat_template& chat,
                   const model::sampling_defaults& defaults = {});

// The OpenAI finish reason for kvactor's: eos and stop -> stop, max_tokens ->
// length, aborted -> abort (as vLLM reports a request it ended early),
// error -> error (a front node lost the worker serving it).
std::string_view openai_finish_reason(finish_reason why);
// kvactor's finish reason for an OpenAI one, as the load drivers read
// answers: stop and tool_calls -> stop (an EOS is not told apart), length ->
// max_tokens, abort -> aborted, anything else -> error.
finish_reason finish_reason_of_openai(std::string_view openai);

// The error for a refused admission: prompt_too_long and invalid_field ->
// 400, overloaded -> 429.
api_error admission_error(const admission& a, std::optional<size_t> prompt_index);

} // namespace kvactor::net
