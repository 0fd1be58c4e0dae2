#include "model/sampling_history.hpp"

#include <algorithm>

namespace kvactor::model {

sampling_history::sampling_history(std::span<const token_id> prompt)
  : prompt_(prompt.begin(), prompt.end()) {
  std::ranges::sort(prompt_);
  prompt_.erase(std::unique(prompt_.begin(), prompt_.end()), prompt_.end());
}

void sampling_history::add_output(token_id t) {
  ++counts_[t];
  ++num_outputs_;
}

void sampling_history::apply_penalties(std::span<float> logits, const sampling_params& p) const {
  const auto valid = [&](token_id t) { return t >= 0 && size_t(t) < logits.size(); };
  if (p.repetition_penalty != 1.0f) {
    const auto penalise = [&](token_id t) {
      float& l = logits[size_t(t)];
      l = l > 0 ? l / p.repetition_penalty : l * p.repetition_penalty;
    };
    for (token_id t : prompt_)
      if (valid(t))
        penalise(t);
    for (const auto& [t, count] : counts_)
      if (valid(t) && !std::ranges::binary_search(prompt_, t))
        penalise(t);
  }
  if (p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f)
    for (const auto& [t, count] : counts_)
      if (valid(t))
        logits[size_t(t)] -= p.frequency_penalty * float(count) + p.presence_penalty;
}

} // namespace kvactor::model
