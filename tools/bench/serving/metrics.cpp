#include "tools/bench/serving/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace kvactor::bench {

namespace {

double rank(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto k = static_cast<size_t>(std::max(1.0, std::ceil(p * n)));
  return sorted[k - 1];
}

} // namespace

percentiles percentiles_of(std::vector<double> values) {
  if (values.empty())
    return {};
  std::ranges::sort(values);
  return {rank(values, 0.50), rank(values, 0.90), rank(values, 0.99)};
}

run_metrics summarize(const load_result& r) {
  constexpr size_t max_errors = 5;
  run_metrics m;
  m.num_requests = static_cast<int32_t>(r.requests.size());
  std::vector<double> ttft, itl;
  for (const auto& q : r.requests) {
    m.output_tokens += q.num_tokens;
    if (!q.error.empty()) {
      if (m.errors.size() < max_errors)
        m.errors.push_back(q.error);
      continue;
    }
    ++m.num_ok;
    if (q.first_token_s >= 0)
      ttft.push_back(1e3 * (q.first_token_s - q.sent_s));
    for (double g : q.token_gaps_s)
      itl.push_back(1e3 * g);
  }
  m.wall_s = r.wall_s;
  if (r.wall_s > 0) {
    m.tokens_per_s = static_cast<double>(m.output_tokens) / r.wall_s;
    m.requests_per_s = m.num_ok / r.wall_s;
  }
  m.ttft_ms = percentiles_of(std::move(ttft));
  m.itl_ms = percentiles_of(std::move(itl));

  // Slot-time: each sample weighs by the blocks in use then.
  double used = 0, allocated = 0;
  for (const auto& s : r.samples) {
    used += s.kv_utilisation * s.device_blocks_used;
    allocated += s.device_blocks_used;
  }
  m.kv_utilisation = allocated > 0 ? used / allocated : 0;

  const runtime_figures& f = r.end;
  m.peak_running = f.peak_running;
  m.preemptions = f.preemptions;
  m.prefix_hit_rate = f.prefix_hit_rate;
  m.steps = f.steps;
  if (f.busy_seconds > 0) {
    m.overhead_share = 1 - f.forward_seconds / f.busy_seconds;
    m.planning_share = f.planning_seconds / f.busy_seconds;
    m.sampling_share = f.sampling_seconds / f.busy_seconds;
  }
  return m;
}

} // namespace kvactor::bench
