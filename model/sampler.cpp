#include "model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/rng.hpp"

namespace kvactor::model {

status validate(const sampling_params& p) {
  if (std::isnan(p.temperature) || p.temperature < 0)
    return make_error("sampling", "temperature must be >= 0");
  if (p.top_k < 0) return make_error("sampling", "top_k must be >= 0");
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return make_error("sampling", "top_p must be in (0, 1]");
  return {};
}

token_id greedy(std::span<const float> logits) {
  KVACTOR_ASSERT(!logits.empty(), "greedy() needs logits");
  std::size_t best = 0;
  bool found = false;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (!found || logits[i] > logits[best]) {
      best = i;
      found = true;
    }
  }
  return static_cast<token_id>(best);
}

token_id sample(std::span<const float> logits, const sampling_params& p, uint64_t step) {
  KVACTOR_ASSERT(!logits.empty(), "sample() needs logits");
  if (p.is_greedy()) return greedy(logits);

  struct cand {
    float logit;
    token_id id;
  };
  std::vector<cand> c;
  c.reserve(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isnan(logits[i])) c.push_back({logits[i], static_cast<token_id>(i)});
  if (c.empty()) return 0;
  const auto better = [](const cand& a, const cand& b) {
    return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
  };
  const std::size_t k =
    p.top_k > 0 ? std::min<std::size_t>(static_cast<std::size_t>(p.top_k), c.size()) : c.size();
  if (k < c.size() || p.top_p < 1.0f) {
    // NOTE: only the kept prefix needs ordering; top-p needs it sorted.
    std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(k), c.end(), better);
    c.resize(k);
  }
  float max_logit = c[0].logit;
  for (const auto& x : c) max_logit = std::max(max_logit, x.logit);
  if (std::isinf(max_logit) && max_logit < 0) return c[0].id; // every candidate is -inf

  std::vector<double> w(c.size());
  double total = 0;
  const double inv_t = 1.0 / static_cast<double>(p.temperature);
  for (std::size_t i = 0; i < c.size(); ++i) {
    w[i] = std::exp((static_cast<double>(c[i].logit) - max_logit) * inv_t);
    total += w[i];
  }
  std::size_t n = c.size();
  if (p.top_p < 1.0f) {
    // Smallest prefix (most likely first) whose mass reaches top_p.
    const double target = static_cast<double>(p.top_p) * total;
    double cum = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      cum += w[i];
      if (cum >= target) {
        n = i + 1;
        break;
      }
    }
    total = 0;
    for (std::size_t i = 0; i < n; ++i) total += w[i];
  }
  rng r(mix64(p.seed) ^ mix64(step ^ 0x5851f42d4c957f2dull));
  const double u = r.uniform() * total;
  double cum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cum += w[i];
    if (u < cum) return c[i].id;
  }
  return c[n - 1].id; // rounding: u fell on the very top
}

} // namespace kvactor::model
