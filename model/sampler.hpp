#pragma once
// Sampling one token from a row of logits: greedy, or a draw after
// logit_bias, min_tokens, penalties, temperature, min-p, top-k and top-p
// (sampling_params.hpp gives the order). Pure functions: the random draw is
// fixed by (seed, step), so a request's sampled tokens are reproducible
// whatever batch it ran in and even when a step is recomputed after
// preemption.
//
// Each row costs a few vectorised passes over the vocabulary and never a
// sort of it (model/sampling/): the filters find their cut by bisecting the
// weights and selecting among the few around it; the draw walks the kept
// weights in vocabulary order, by blocks. Ties between equally likely
// tokens go to the lower id.

#include <cstdint>
#include <span>

#include "model/sampling_history.hpp"
#include "model/sampling_params.hpp"
#include "model/token_id.hpp"

namespace kvactor::model {

// The index of the largest logit; the lowest index on ties; NaN never wins
// unless every logit is NaN (then 0).
token_id greedy(std::span<const float> logits);

// One token. `step` is the position of the token being generated within its
// request (0 for the first generated token); `history` is the request's
// tokens so far, needed only when p.penalises(). `logits` must not be empty.
token_id sample(std::span<const float> logits, const sampling_params& p, uint64_t step,
                const sampling_history* history = nullptr);

// The draw of a row at output `step` of a request seeded `seed`: uniform in
// [0, 1), the same on every device.
double sampling_uniform(uint64_t seed, uint64_t step);

} // namespace kvactor::model
