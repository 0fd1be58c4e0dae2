#pragma once
// The filters' distribution computed the plain way, in double, with a full
// sort of the row (the sampler's definition, which the fast sampler must
// match): weights exp((logit - max) / T); min_p, then top_k, then top_p, each
// over what the last kept, most likely first and the lower id first on ties.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>

#include "model/sampling_params.hpp"

namespace kvactor::model::testing {

inline std::vector<double> reference_distribution(std::span<const float> logits,
                                                  const sampling_params& p) {
  const size_t n = logits.size();
  double m = -INFINITY;
  for (float l : logits)
    if (!std::isnan(l))
      m = std::max(m, double(l));
  std::vector<double> w(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    if (!std::isnan(logits[i]))
      w[i] = std::exp((double(logits[i]) - m) / p.temperature);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return w[a] > w[b]; });
  size_t kept = 0;
  while (kept < n && w[order[kept]] > 0 && w[order[kept]] >= p.min_p)
    ++kept;
  if (p.top_k > 0)
    kept = std::min(kept, size_t(p.top_k));
  double mass = 0;
  for (size_t i = 0; i < kept; ++i)
    mass += w[order[i]];
  if (p.top_p < 1.0f) {
    double acc = 0;
    for (size_t i = 0; i < kept; ++i) {
      acc += w[order[i]];
      if (acc >= double(p.top_p) * mass) {
        kept = i + 1;
        break;
      }
    }
  }
  std::vector<double> prob(n, 0.0);
  double total = 0;
  for (size_t i = 0; i < kept; ++i)
    total += w[order[i]];
  for (size_t i = 0; i < kept; ++i)
    prob[order[i]] = w[order[i]] / total;
  return prob;
}

} // namespace kvactor::model::testing
