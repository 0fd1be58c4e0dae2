#include "model/logprobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/assert.hpp"

namespace kvactor::model {

token_logprobs logprobs(std::span<const float> logits, token_id token, int32_t k) {
  KVACTOR_ASSERT(!logits.empty(), "logprobs() needs logits");
  KVACTOR_ASSERT(token >= 0 && static_cast<std::size_t>(token) < logits.size(),
                 "token outside the logits");
  constexpr double minus_inf = -std::numeric_limits<double>::infinity();
  auto value = [&](std::size_t i) {
    return std::isnan(logits[i]) ? minus_inf : static_cast<double>(logits[i]);
  };
  double max_logit = minus_inf;
  for (std::size_t i = 0; i < logits.size(); ++i) max_logit = std::max(max_logit, value(i));
  // NOTE: log sum exp with the maximum taken out; a row of -inf (and NaN)
  // only has no distribution: every log probability is -inf then.
  double sum = 0;
  if (std::isfinite(max_logit))
    for (std::size_t i = 0; i < logits.size(); ++i) sum += std::exp(value(i) - max_logit);
  const double log_total = std::isfinite(max_logit) ? max_logit + std::log(sum) : max_logit;
  auto logprob = [&](std::size_t i) {
    const double v = value(i);
    return static_cast<float>(std::isinf(log_total) || std::isinf(v) ? minus_inf : v - log_total);
  };

  token_logprobs out;
  out.logprob = logprob(static_cast<std::size_t>(token));
  const auto n =
    static_cast<std::size_t>(std::clamp<int32_t>(k, 0, static_cast<int32_t>(logits.size())));
  if (n == 0) return out;
  std::vector<token_id> ids(logits.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<token_id>(i);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](token_id a, token_id b) {
                      const double va = value(static_cast<std::size_t>(a)),
                                   vb = value(static_cast<std::size_t>(b));
                      return va != vb ? va > vb : a < b;
                    });
  out.top.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    out.top.push_back({ids[i], logprob(static_cast<std::size_t>(ids[i]))});
  return out;
}

} // namespace kvactor::model
