#pragma once
// request_state: the request actor's state — one generation from admission
// to its done events: validation, the prompt's tokens, and for each choice
// streaming text pieces without splitting characters, stop sequences, usage
// and timing. No CAF in here (the public event structs are plain).
//
// Text is streamed as it becomes final: the bytes that could still turn out
// to start a stop sequence are held back until they cannot.

#include "actors/runner/constraint_compiler.hpp"
#include "actors/core/sequence.hpp"
#include "actors/core/step.hpp"
#include "kvactor/kvactor.hpp"
#include "model/tokenizer/incremental_decoder.hpp"
#include "model/tokenizer/tokenizer.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kvactor {

// The model facts a request is checked against.
struct request_limits {
  int32_t vocab_size = 0;
  int32_t max_context = 0; // prompt plus generated tokens
};

class request_state {
public:
  using clock = std::chrono::steady_clock;

  // Validates `req` (request_fields' rules, then the prompt against the
  // model), tokenizes its prompt and compiles its constraint with
  // `constraints` (none: a constraint is refused, `no_constraints` saying
  // why); a refusal names the field.
  static std::variant<request_state, admission>
  make(request_id id, generate_request req, const model::tokenizer& tok,
       const request_limits& limits, clock::time_point now,
       constraint_compiler* constraints = nullptr,
       std::string_view no_constraints = "this runtime compiles no output constraints");

  request_id id() const { return id_; }
  const std::vector<token_id>& prompt() const { return prompt_; }
  int32_t priority() const { return req_.priority; }
  bool returns_prompt_tokens() const { return req_.return_prompt_tokens; }
  int32_t num_choices() const { return static_cast<int32_t>(choices_.size()); }
  generation_params params() const;

  // A generated token of a choice (with its logprobs, when the request asked
  // for them); nullopt once the choice has stopped (late tokens). The EOS
  // that ends a choice adds no text (as OpenAI's API and vLLM answer).
  std::optional<token_event> on_token(int32_t choice, token_id t, clock::time_point now,
                                      const model::token_logprobs& logprobs = {},
                                      bool is_eos = false);
  // A stop sequence was seen: the scheduler should end the choice.
  bool stop_seen(int32_t choice) const { return choices_.at(size_t(choice)).stop_seen; }
  // The choice's one done event, from the scheduler's final update.
  done_event finish(int32_t choice, const sequence_update& last, clock::time_point now);

private:
  // One choice's output so far.
  struct output {
    explicit output(const model::tokenizer& tok) : decoder(tok) {}
    model::incremental_decoder decoder;
    std::vector<int32_t> tokens;
    std::string text;        // decoded so far, cut at a stop sequence
    size_t num_streamed = 0; // bytes of text already sent
    bool stop_seen = false;
    std::optional<clock::time_point> first_token;
  };

  request_state(request_id id, generate_request req, std::vector<token_id> prompt,
                const model::tokenizer& tok, clock::time_point now);
  // How many bytes at the end of `text` could begin a stop sequence.
  size_t held_back(const std::string& text) const;
  token_logprob logprob_of(token_id t, float logprob) const;

  request_id id_;
  generate_request req_;
  std::vector<token_id> prompt_;
  const model::tokenizer* tok_;
  std::vector<output> choices_;
  clock::time_point start_;
};

} // namespace kvactor
