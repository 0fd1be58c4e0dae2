#pragma once
// request_defaults: where a front door's request starts before its fields
// are read. The model's generation_config.json defaults (model/
// sampling_defaults.hpp) lie over the front door's own, and the fields a
// request sends are read over both, so the model's apply to the fields left
// out only (as vLLM applies them).

#include "kvactor/kvactor.hpp"
#include "model/sampling_defaults.hpp"

namespace kvactor::net {

// Sets each field of `req` that `d` sets.
void apply_sampling_defaults(const model::sampling_defaults& d, generate_request& req);

} // namespace kvactor::net
