#pragma once
// A log probability as kvactor's protocols report it: a finite number. An
// impossible token's -inf becomes -9999, as OpenAI's API reports it (JSON
// has no infinity).

#include <cmath>

namespace kvactor::net {

inline double reported_logprob(float logprob) {
  return std::isfinite(logprob) ? double(logprob) : -9999.0;
}

} // namespace kvactor::net
