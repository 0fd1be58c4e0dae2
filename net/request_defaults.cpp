#include "net/request_defaults.hpp"

#include "actors/request_fields.hpp"

namespace kvactor::net {

void apply_sampling_defaults(const model::sampling_defaults& d, generate_request& req) {
  if (d.temperature)
    req.temperature = *d.temperature;
  if (d.top_p)
    req.top_p = *d.top_p;
  if (d.top_k)
    req.top_k = *d.top_k;
  if (d.min_p)
    req.min_p = *d.min_p;
  if (d.repetition_penalty)
    req.repetition_penalty = *d.repetition_penalty;
}

std::optional<std::string> check_min_tokens_fit(const generate_request& req) {
  // NOTE: only these two set, so that the one rule check_fields can find
  // broken is theirs (every other field has its defaults).
  generate_request probe;
  probe.max_tokens = req.max_tokens;
  probe.min_tokens = req.min_tokens;
  return check_fields(probe);
}

} // namespace kvactor::net
