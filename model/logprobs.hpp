#pragma once
// Log probabilities of one row of logits, for requests that ask for them:
// the generated token's and the k most likely tokens'. They are those of the
// model's distribution, softmax(logits), before temperature, top-k and top-p
// (what vLLM reports by default), computed in double.

#include <cstdint>
#include <span>
#include <vector>

#include "model/token_logprobs.hpp"

namespace kvactor::model {

// log softmax(logits)[token], and the k most likely tokens (lowest id first
// on ties). A NaN logit counts as impossible: -inf. `logits` must not be
// empty and `token` must index it; k is clamped to the row's size.
token_logprobs logprobs(std::span<const float> logits, token_id token, int32_t k);

} // namespace kvactor::model
