#pragma once
// Rotary embedding frequencies from the config, as transformers computes
// them (ROPE_INIT_FUNCTIONS "default", "linear", "llama3"). The rotation
// itself (rotate-half layout) belongs to the forward pass.

#include <vector>

#include "model/config.hpp"

namespace kvactor::model {

// inv_freq[i] for i in [0, head_dim / 2): 1 / rope_theta^(2i / head_dim),
// divided by the factor for linear scaling, blended per wavelength for
// llama3 scaling, then divided by frequency_divisors[i] when there are any.
// The angle of dimension pair i at position p is p * inv_freq[i].
std::vector<double> rope_inv_freq(const model_config& c);

} // namespace kvactor::model
