#pragma once
// The logprobs of a run of one choice's tokens, as OpenAI's two APIs write
// them (token events that carry logprobs: token_event::has_logprobs):
//
//   /v1/completions        {"tokens":["Hel","lo"],"token_logprobs":[-0.3,-0.1],
//                           "top_logprobs":[{"Hel":-0.3,"He":-1.7},…],"text_offset":[0,3]}
//   /v1/chat/completions   {"content":[{"token":"Hel","logprob":-0.3,"bytes":[72,101,108],
//                           "top_logprobs":[{"token":"Hel","logprob":-0.3,"bytes":[…]},…]},…]}
//
// A token's text is its own bytes (U+FFFD where they are a piece of a
// character; the chat's `bytes` keep them exact); text_offset counts the
// bytes of the choice's tokens before it.

#include "kvactor/kvactor.hpp"
#include "net/json_writer.hpp"

#include <cstdint>
#include <span>

namespace kvactor::net {

// `first_offset`: the bytes of the choice's tokens before tokens[0].
json_writer completion_logprobs(std::span<const token_event> tokens, int64_t first_offset);
json_writer chat_logprobs(std::span<const token_event> tokens);

// The bytes a run of tokens adds to text_offset.
int64_t num_token_bytes(std::span<const token_event> tokens);

} // namespace kvactor::net
