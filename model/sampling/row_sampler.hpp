#pragma once
// The sampler (model/sampler.hpp) over a chosen instruction set's row
// passes: sample() and greedy() run the CPU's best; tests run each.

#include <cstdint>
#include <span>

#include "model/sampling/row_ops.hpp"
#include "model/sampling_history.hpp"
#include "model/sampling_params.hpp"

namespace kvactor::model::sampling {

token_id greedy_row(const row_ops& ops, std::span<const float> logits);
token_id sample_row(const row_ops& ops, std::span<const float> logits, const sampling_params& p,
                    uint64_t step, const sampling_history* history);

} // namespace kvactor::model::sampling
