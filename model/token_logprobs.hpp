#pragma once
// A generated token's log probability and its most likely alternatives, as
// logprobs.hpp computes them and the runtime reports them. Plain structs.

#include <cstdint>
#include <vector>

#include "model/token_id.hpp"

namespace kvactor::model {

struct logprob_entry {
  token_id token = 0;
  float logprob = 0.0f;
};

struct token_logprobs {
  float logprob = 0.0f;            // of the generated token
  std::vector<logprob_entry> top;  // the k most likely, most likely first
};

} // namespace kvactor::model
