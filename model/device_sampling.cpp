#include "model/device_sampling.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "model/sampler.hpp"

namespace kvactor::model {

namespace gpu = kernels::gpu;

void device_sampling_batch::clear() {
  rows_.clear();
  edits_.clear();
}

gpu::logit_edit& device_sampling_batch::edit(token_id t) {
  auto [at, fresh] = row_edits_.try_emplace(t, edits_.size());
  if (fresh)
    edits_.push_back({t, 0, 0.0f, 0.0f, 0.0f});
  return edits_[at->second];
}

void device_sampling_batch::add(const sampling_params& p, uint64_t step,
                                const sampling_history* history, int32_t num_logprobs,
                                int32_t vocab_size) {
  KVACTOR_ASSERT(num_logprobs <= gpu::max_sample_logprobs, "more logprobs than the device keeps");
  gpu::sample_row r;
  r.u = sampling_uniform(p.seed, step);
  r.inv_temperature = p.is_greedy() ? 0.0f : 1.0f / p.temperature;
  r.top_k = p.top_k;
  r.top_p = p.top_p;
  r.min_p = p.min_p;
  r.repetition_penalty = p.repetition_penalty;
  r.num_logprobs = num_logprobs;
  r.edits_begin = static_cast<int32_t>(edits_.size());
  if (p.changes_logits(step)) {
    row_edits_.clear();
    const auto valid = [&](token_id t) { return t >= 0 && t < vocab_size; };
    for (const token_bias& b : p.logit_bias)
      if (valid(b.token)) {
        gpu::logit_edit& e = edit(b.token);
        e.flags |= gpu::edit_bias;
        e.bias = b.bias;
      }
    if (step < static_cast<uint64_t>(p.min_tokens))
      for (token_id t : p.min_tokens_banned)
        if (valid(t))
          edit(t).flags |= gpu::edit_ban;
    if (p.penalises()) {
      KVACTOR_ASSERT(history, "penalties need the request's history");
      if (p.repetition_penalty != 1.0f) {
        for (token_id t : history->prompt())
          if (valid(t))
            edit(t).flags |= gpu::edit_repeat;
        for (const auto& [t, count] : history->output_counts())
          if (valid(t))
            edit(t).flags |= gpu::edit_repeat;
      }
      if (p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f)
        for (const auto& [t, count] : history->output_counts())
          if (valid(t)) {
            gpu::logit_edit& e = edit(t);
            e.flags |= gpu::edit_sub;
            e.sub = p.frequency_penalty * float(count) + p.presence_penalty;
          }
    }
  }
  r.edits_end = static_cast<int32_t>(edits_.size());
  rows_.push_back(r);
}

token_logprobs logprobs_of(const gpu::sampled_row& out, int32_t k, int32_t vocab_size) {
  token_logprobs l;
  l.logprob = out.logprob;
  const int32_t n = std::clamp(k, 0, vocab_size);
  l.top.reserve(size_t(n));
  for (int32_t i = 0; i < n; ++i)
    l.top.push_back({out.top_ids[i], out.top_logprobs[i]});
  return l;
}

} // namespace kvactor::model
