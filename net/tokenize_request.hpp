#pragma once
// POST /tokenize and /detokenize: the model's tokenizer over HTTP, in
// vLLM's shapes (llama.cpp's field names taken too).
//
//   /tokenize    {"prompt": "text", "add_special_tokens": true}
//                {"messages": [...]}  (rendered by the chat template, no
//                                      special tokens added by default)
//             -> {"count": 3, "max_model_len": 8192, "tokens": [...]}
//   /detokenize  {"tokens": [...]}  ->  {"prompt": "text"}
//
// llama.cpp's clients send "content" for "prompt" and "add_special" for
// "add_special_tokens", and read "content" from /detokenize (also written).

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "model/chat_template.hpp"
#include "model/tokenizer/tokenizer.hpp"
#include "net/openai_request.hpp"

namespace kvactor::net {

// The JSON answer to a /tokenize body; `max_model_len`, when known, is
// reported as vLLM reports it.
std::variant<std::string, api_error> answer_tokenize(std::string_view body,
                                                     const model::tokenizer& tok,
                                                     const model::chat_template& chat,
                                                     std::optional<int64_t> max_model_len);

// The JSON answer to a /detokenize body.
std::variant<std::string, api_error> answer_detokenize(std::string_view body,
                                                       const model::tokenizer& tok);

} // namespace kvactor::net
