#pragma once
// sampling_history: what one sequence's penalties read — the set of its
// prompt's tokens and how often each token was generated — kept by the
// runner from step to step (only for requests with penalties) and updated
// with each token it samples, so a step's penalties cost O(distinct tokens
// so far), never O(vocabulary) or O(sequence).

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/sampling_params.hpp"
#include "model/token_id.hpp"

namespace kvactor::model {

class sampling_history {
public:
  sampling_history() = default;
  explicit sampling_history(std::span<const token_id> prompt);

  void add_output(token_id t);
  int32_t num_outputs() const { return num_outputs_; }
  // The prompt's distinct tokens, sorted; how often each output token came.
  std::span<const token_id> prompt() const { return prompt_; }
  const std::unordered_map<token_id, int32_t>& output_counts() const { return counts_; }

  // vLLM's penalties on `logits`: a token of the prompt or the output has
  // its logit divided by repetition_penalty (multiplied when negative);
  // then each output token's logit loses frequency_penalty times its count
  // and presence_penalty once.
  void apply_penalties(std::span<float> logits, const sampling_params& p) const;

private:
  std::vector<token_id> prompt_;                 // sorted, distinct
  std::unordered_map<token_id, int32_t> counts_; // output token -> times generated
  int32_t num_outputs_ = 0;
};

} // namespace kvactor::model
