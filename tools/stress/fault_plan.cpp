#include "tools/stress/fault_plan.hpp"

#include <random>

namespace kvactor::stress {

std::vector<request_faults> make_fault_plan(const std::vector<stress_request>& workload,
                                            const fault_options& o) {
  // NOTE: a stream of its own (seed + a constant) so that the plan does not
  // shift the workload's draws.
  std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<request_faults> plan(workload.size());
  for (size_t i = 0; i < workload.size(); ++i) {
    const int32_t max_tokens = workload[i].request.max_tokens;
    request_faults& f = plan[i];
    if (unit(rng) < o.cancel_fraction) {
      // A fifth at once (before acceptance / while waiting); the rest at a
      // token index up to a little past the end (a late cancel must be harmless).
      f.cancel_at = unit(rng) < 0.2 ? cancel_at_once
                                    : std::uniform_int_distribution<int32_t>(0, max_tokens)(rng);
    } else if (unit(rng) < o.disconnect_fraction) {
      f.disconnect_at = std::uniform_int_distribution<int32_t>(0, std::max(0, max_tokens - 1))(rng);
    }
    f.malformed_before = unit(rng) < o.malformed_fraction;
  }
  // NOTE: drawn after the rest, so that jitter leaves the other faults as they were.
  if (o.jitter_ms > 0)
    for (request_faults& f : plan)
      if (f.cancel_at != no_fault)
        f.cancel_delay_ms = std::uniform_int_distribution<int32_t>(0, o.jitter_ms)(rng);
  return plan;
}

} // namespace kvactor::stress
