#pragma once
// Sampling one token from a row of logits: greedy, temperature, top-k,
// top-p. Pure functions: the random draw is fixed by (seed, step), so a
// request's sampled tokens are reproducible whatever batch it ran in and
// even when a step is recomputed after preemption.

#include <cstdint>
#include <span>

#include "base/result.hpp"
#include "model/sampling_params.hpp"
#include "model/token_id.hpp"

namespace kvactor::model {

// Rejects NaN or negative temperature, negative top_k, top_p outside (0, 1].
status validate(const sampling_params& p);

// The index of the largest logit; the lowest index on ties; NaN never wins
// unless every logit is NaN (then 0).
token_id greedy(std::span<const float> logits);

// One token. `step` is the position of the token being generated within its
// request (0 for the first generated token). `logits` must not be empty.
token_id sample(std::span<const float> logits, const sampling_params& p, uint64_t step);

} // namespace kvactor::model
