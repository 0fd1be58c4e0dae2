#pragma once
// completion: one /v1/completions or /v1/chat/completions answer built from
// the runtime's events — the JSON body once every choice is done, or,
// streaming, one Server-Sent Event per piece of text (a chat's first one per
// choice opens the assistant's message), a last chunk per choice with its
// finish reason, the usage when asked for, and [DONE]. Pure.

#include "kvactor/kvactor.hpp"
#include "model/chat/tool_call_reader.hpp"
#include "model/chat/tool_calls.hpp"
#include "net/json_writer.hpp"

#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvactor::net {

struct completion_meta {
  std::string id; // cmpl-…
  int64_t created = 0; // Unix seconds
  std::string model;
  bool stream = false;
  bool include_usage = false;
  bool chat = false; // chat.completion objects: messages and deltas rather than text
  bool return_token_ids = false; // choices and chunks carry token_ids (vLLM's extension)
  bool logprobs = false; // choices and chunks carry their tokens' logprobs (openai_logprobs.hpp)
  // A chat with tools: an answer that is nothing but calls in this format
  // comes as tool_calls (finish_reason "tool_calls"); streaming, its text
  // is held back while it may still become calls.
  std::optional<model::tool_call_format> tool_calls{};
  bool named_tool = false; // completion_request::named_tool
  // completion_request::constrained_calls: once the answer begins a call,
  // its calls stream as they are written (a call's id and name once its
  // name is whole, then its arguments piece by piece), and a cut one is
  // answered as far as it went.
  bool constrained_calls = false;
};

class completion {
public:
  // n choices of each of num_prompts prompts: prompt p's choice c is the
  // answer's choice p * n + c.
  completion(completion_meta meta, size_t num_prompts, size_t n = 1);

  // Prompt `index` runs as the runtime's request `id`; its token ids, when
  // the answer returns them (return_token_ids).
  void accepted(size_t index, request_id id, std::vector<int32_t> prompt_tokens = {});
  // What a stream sends for an event (empty when not streaming, or nothing
  // to send); events of unknown requests are ignored.
  std::string on_token(const token_event& ev);
  std::string on_done(const done_event& d);
  bool done() const { return num_done_ == choices_.size(); }
  // Once done: the whole JSON body, or the stream's end (usage and [DONE]).
  std::string finish() const;

private:
  struct choice {
    size_t num_streamed = 0; // bytes of text sent in chunks
    bool opened = false;     // a chat stream's role delta went out
    bool done = false;
    done_event end;
    std::vector<token_event> logprobs; // not streaming: every token's, for the body
    int64_t num_token_bytes = 0;       // streaming: text_offset of the next token
    bool prompt_sent = false;          // streaming: prompt_token_ids went out
    bool holding = true;               // streaming with tools: text held (may be calls)
    bool calling = false;              // streaming: the answer has begun its calls
    std::string held;
    model::tool_call_reader calls;      // streaming: the calls read so far
    size_t num_read = 0;                // bytes of text the reader has
    std::vector<size_t> arguments_sent; // per call announced: bytes of its arguments sent
  };
  // The calls an answer's text makes: every one, when it is nothing but
  // calls (`whole`), or, constrained_calls, those named so far, as far as
  // they went.
  struct answer_calls {
    std::vector<model::tool_call> calls;
    bool whole = false;
  };
  // The answer's choice an event belongs to; nullopt for unknown requests.
  std::optional<size_t> choice_of(request_id id, int32_t choice) const;
  // What a chunk or a choice says of its tokens: null, or their logprobs.
  void write_logprobs(json_writer& w, std::span<const token_event> tokens,
                      int64_t first_offset) const;
  // One event of choice `index`: a piece of text (with its token, when it
  // carries logprobs), its end, or (opening) a chat's role delta; a chat's
  // first event is preceded by its opening.
  // `finish_reason`: OpenAI's, or empty while the choice goes on (null).
  // `with_prompt`: the event carries the prompt's token ids (a completion's
  // choice, a chat's envelope), as vLLM sends them in a choice's first.
  std::string chunk(size_t index, std::string_view text, std::string_view finish_reason,
                    std::span<const int32_t> token_ids, std::span<const token_event> tokens = {},
                    int64_t first_offset = 0, bool opening = false,
                    bool with_prompt = false) const;
  std::string piece(choice& c, size_t index, std::string_view text, std::string_view finish_reason,
                    std::span<const int32_t> token_ids, std::span<const token_event> tokens = {});
  std::string_view object() const;
  // An answer of whole calls ends with "tool_calls", a named function's with
  // "stop"; a cut one with its own reason ("length", ...).
  std::string_view calls_finish_reason(const answer_calls& a, finish_reason own) const;
  // nullopt when the answer is not calls (or not a chat with tools).
  std::optional<answer_calls> calls_in(std::string_view text) const;
  // Call k of choice `index`'s id: call_…, unique in the answer.
  std::string call_id(size_t index, size_t k) const;
  // OpenAI's tool_calls array of choice `index`.
  std::vector<json_writer> tool_calls_json(size_t index,
                                           const std::vector<model::tool_call>& calls) const;
  // A stream's events for what choice `index`'s calls gained since the last:
  // a call's index, id, type and name with empty arguments once it is named,
  // then the arguments' new text, which clients append to what they hold.
  std::string call_deltas(choice& c, size_t index);
  std::string tool_call_delta(size_t index, json_writer call) const;
  // id, object, created, model: what every answer and event starts with.
  json_writer envelope() const;
  std::string usage() const;

  completion_meta meta_;
  size_t n_;
  std::vector<choice> choices_;
  std::unordered_map<request_id, size_t> index_of_;
  std::vector<std::vector<int32_t>> prompt_tokens_; // per prompt, when returned
  size_t num_done_ = 0;
};

// One Server-Sent Event carrying `data`.
std::string sse_event(std::string_view data);

} // namespace kvactor::net
