#include "net/request_defaults.hpp"

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

} // namespace kvactor::net
