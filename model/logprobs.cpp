#include "model/logprobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/assert.hpp"
#include "model/sampling/row_ops.hpp"
#include "model/sampling/top_n.hpp"

namespace kvactor::model {

namespace {

constexpr double minus_inf = -std::numeric_limits<double>::infinity();

// A NaN logit counts as impossible.
double value(std::span<const float> logits, size_t i) {
  return std::isnan(logits[i]) ? minus_inf : static_cast<double>(logits[i]);
}

// The n most likely ids, most likely first (sampling::top_n); NaN logits
// rank last, as -inf, lowest id first.
std::vector<token_id> most_likely(const sampling::row_ops& ops, std::span<const float> logits,
                                  size_t n) {
  std::vector<sampling::candidate> top;
  sampling::top_n(ops, logits.data(), static_cast<int64_t>(logits.size()), n,
                  -std::numeric_limits<float>::infinity(), top);
  std::vector<token_id> ids;
  ids.reserve(n);
  for (const sampling::candidate& c : top)
    ids.push_back(c.id);
  for (size_t i = 0; i < logits.size() && ids.size() < n; ++i)
    if (std::isnan(logits[i]))
      ids.push_back(static_cast<token_id>(i));
  return ids;
}

} // namespace

token_logprobs logprobs(std::span<const float> logits, token_id token, int32_t k) {
  KVACTOR_ASSERT(!logits.empty(), "logprobs() needs logits");
  KVACTOR_ASSERT(token >= 0 && static_cast<std::size_t>(token) < logits.size(),
                 "token outside the logits");
  const sampling::row_ops& ops = sampling::best_row_ops();
  const auto size = static_cast<int64_t>(logits.size());
  const float max_logit = ops.max(logits.data(), size);
  // NOTE: log sum exp with the maximum taken out; a row with no finite
  // maximum (every logit -inf or NaN, or one +inf) has no distribution:
  // every log probability is -inf then.
  const double log_total = std::isfinite(max_logit)
                             ? max_logit + std::log(ops.sum_exp(logits.data(), size, max_logit))
                             : minus_inf;
  auto logprob = [&](token_id i) {
    const double v = value(logits, size_t(i));
    return static_cast<float>(std::isinf(log_total) || std::isinf(v) ? minus_inf : v - log_total);
  };

  token_logprobs out;
  out.logprob = logprob(token);
  const auto n = static_cast<size_t>(std::clamp<int32_t>(k, 0, static_cast<int32_t>(size)));
  if (n == 0)
    return out;
  out.top.reserve(n);
  for (token_id id : most_likely(ops, logits, n))
    out.top.push_back({id, logprob(id)});
  return out;
}

} // namespace kvactor::model
