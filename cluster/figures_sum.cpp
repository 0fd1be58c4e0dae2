#include "cluster/figures_sum.hpp"

namespace kvactor::cluster {

namespace {

void add(histogram& into, const histogram& x) {
  if (into.counts.empty()) {
    into = x;
    return;
  }
  if (into.bounds != x.bounds || into.counts.size() != x.counts.size())
    return;
  for (size_t i = 0; i < x.counts.size(); ++i)
    into.counts[i] += x.counts[i];
  into.sum += x.sum;
  into.count += x.count;
}

} // namespace

runtime_figures sum_figures(const std::vector<addressed_figures>& parts) {
  runtime_figures s;
  double used_slots = 0; // kv_utilisation weighted by each worker's pool
  for (const auto& [address, f] : parts) {
    s.device_blocks_total += f.device_blocks_total;
    s.device_blocks_free += f.device_blocks_free;
    s.device_blocks_cached += f.device_blocks_cached;
    s.device_blocks_used += f.device_blocks_used;
    s.host_blocks_total += f.host_blocks_total;
    s.host_blocks_free += f.host_blocks_free;
    s.running += f.running;
    s.waiting += f.waiting;
    s.swapped += f.swapped;
    s.requests_finished += f.requests_finished;
    s.requests_aborted += f.requests_aborted;
    s.preemptions += f.preemptions;
    s.preemptions_by_swap += f.preemptions_by_swap;
    s.swap_outs_refused += f.swap_outs_refused;
    used_slots += f.kv_utilisation * f.device_blocks_total;
    s.tokens_generated += f.tokens_generated;
    s.steps += f.steps;
    s.peak_running += f.peak_running;
    s.busy_seconds += f.busy_seconds;
    s.planning_seconds += f.planning_seconds;
    s.forward_seconds += f.forward_seconds;
    s.sampling_seconds += f.sampling_seconds;
    for (const auto& b : f.broken_invariants)
      s.broken_invariants.push_back(address + ": " + b);
    s.prompt_tokens += f.prompt_tokens;
    s.prefix_queries += f.prefix_queries;
    s.prefix_hits += f.prefix_hits;
    add(s.time_to_first_token, f.time_to_first_token);
    add(s.inter_token_latency, f.inter_token_latency);
    add(s.e2e_latency, f.e2e_latency);
    add(s.queue_time, f.queue_time);
    add(s.step_time, f.step_time);
  }
  s.prefix_hit_rate = s.prefix_queries > 0 ? double(s.prefix_hits) / double(s.prefix_queries) : 0.0;
  s.kv_utilisation = s.device_blocks_total > 0 ? used_slots / s.device_blocks_total : 0.0;
  return s;
}

} // namespace kvactor::cluster
