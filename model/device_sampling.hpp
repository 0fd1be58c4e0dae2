#pragma once
// device_sampling: a step's sampled rows as the device's sampler
// (kernels/cuda/sample_ops.cuh) reads them, and its answers back as the
// runtime's tokens and log probabilities. Pure host code: the CUDA forward
// pass uploads what this packs.
//
// Each row carries what the CPU sampler reads (model/sampler.hpp): its
// parameters, its draw (fixed by seed and step) and its logit edits — the
// logit_bias, the min_tokens bans and the penalties from its history,
// merged into one edit per token.

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernels/cuda/sample_rows.hpp"
#include "model/sampling_history.hpp"
#include "model/sampling_params.hpp"
#include "model/token_logprobs.hpp"

namespace kvactor::model {

class device_sampling_batch {
public:
  void clear();
  // The next sampled row: `step` is its output position, `history` its
  // tokens (needed when p.penalises()), num_logprobs -1 for none.
  void add(const sampling_params& p, uint64_t step, const sampling_history* history,
           int32_t num_logprobs, int32_t vocab_size);

  std::span<const kernels::gpu::sample_row> rows() const { return rows_; }
  std::span<const kernels::gpu::logit_edit> edits() const { return edits_; }

private:
  kernels::gpu::logit_edit& edit(token_id t);

  std::vector<kernels::gpu::sample_row> rows_;
  std::vector<kernels::gpu::logit_edit> edits_;
  std::unordered_map<token_id, size_t> row_edits_; // the row being added: token -> edit
};

// The log probabilities the device wrote for a row that asked for `k`
// alternatives (clamped to the vocabulary).
token_logprobs logprobs_of(const kernels::gpu::sampled_row& out, int32_t k, int32_t vocab_size);

} // namespace kvactor::model
