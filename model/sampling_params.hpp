#pragma once
// What a request asks of sampling (sampler.hpp draws the token). A plain
// struct, so that the scheduler's step plans carry it without the model
// library.

#include <cstdint>
#include <vector>

#include "model/token_id.hpp"

namespace kvactor::model {

struct token_bias {
  token_id token = 0;
  float bias = 0.0f;
};

// The row's logits are changed, in this order, before the filters:
//   logit_bias added; while fewer than min_tokens tokens are generated, the
//   min_tokens_banned ones made impossible; repetition_penalty over the
//   prompt's and output's tokens; frequency and presence penalties over the
//   output's (sampling_history.hpp);
// then divided by the temperature, and filtered, each over what the last
// kept: min_p, top_k, top_p (sampler.hpp).
struct sampling_params {
  float temperature = 1.0f; // <= 0: greedy
  int32_t top_k = 0;        // keep the k most likely tokens; <= 0: all
  float top_p = 1.0f;       // keep the smallest set whose probability reaches top_p; 1: all
  uint64_t seed = 0;        // per request
  float min_p = 0.0f;       // keep tokens at least min_p times as likely as the most likely
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float repetition_penalty = 1.0f;
  std::vector<token_bias> logit_bias{};
  int32_t min_tokens = 0;
  std::vector<token_id> min_tokens_banned{}; // EOS and stop ids, while below min_tokens

  bool is_greedy() const { return temperature <= 0.0f || top_k == 1; }
  // Whether the row's history (its prompt and output tokens) matters.
  bool penalises() const {
    return presence_penalty != 0.0f || frequency_penalty != 0.0f || repetition_penalty != 1.0f;
  }
  // Whether the logits change at all before the filters at output `step`.
  bool changes_logits(uint64_t step) const {
    return penalises() || !logit_bias.empty() ||
           (step < static_cast<uint64_t>(min_tokens) && !min_tokens_banned.empty());
  }
};

} // namespace kvactor::model
