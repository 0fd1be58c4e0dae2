#include "actors/runtime/serving_metrics.hpp"

#include <algorithm>
#include <cassert>

namespace kvactor {

namespace {

double seconds(serving_metrics::clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace

void observe(histogram& h, double value) {
  assert(h.counts.size() == h.bounds.size() + 1);
  const auto bucket = std::lower_bound(h.bounds.begin(), h.bounds.end(), value) - h.bounds.begin();
  ++h.counts[static_cast<size_t>(bucket)];
  h.sum += value;
  ++h.count;
}

histogram latency_histogram() {
  histogram h;
  h.bounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75,
              1,     2.5,    5,     7.5,  10,    30,   60,    120, 300,  600};
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

serving_metrics::serving_metrics()
  : ttft_(latency_histogram()), inter_token_(latency_histogram()), e2e_(latency_histogram()),
    queue_(latency_histogram()), step_(latency_histogram()) {
}

void serving_metrics::admitted(seq_id id, int32_t num_prompt_tokens, clock::time_point now) {
  live_[id] = {now, false, std::nullopt};
  ++num_admitted_;
  num_prompt_tokens_ += num_prompt_tokens;
}

void serving_metrics::scheduled(seq_id id, clock::time_point now) {
  auto i = live_.find(id);
  if (i == live_.end() || i->second.scheduled)
    return;
  i->second.scheduled = true;
  observe(queue_, seconds(now - i->second.admitted));
}

void serving_metrics::produced(seq_id id, clock::time_point now) {
  auto i = live_.find(id);
  if (i == live_.end())
    return;
  auto& t = i->second;
  ++num_tokens_;
  observe(t.last_token ? inter_token_ : ttft_, seconds(now - t.last_token.value_or(t.admitted)));
  t.last_token = now;
}

void serving_metrics::ended(seq_id id, bool aborted, clock::time_point now) {
  auto i = live_.find(id);
  if (i == live_.end())
    return;
  ++(aborted ? num_aborted_ : num_finished_);
  if (!aborted)
    observe(e2e_, seconds(now - i->second.admitted));
  live_.erase(i);
}

void serving_metrics::stepped(double s) {
  observe(step_, s);
}

void serving_metrics::fill(runtime_figures& f) const {
  f.requests_finished = num_finished_;
  f.requests_aborted = num_aborted_;
  f.tokens_generated = num_tokens_;
  f.steps = step_.count;
  f.busy_seconds = step_.sum;
  f.prompt_tokens = num_prompt_tokens_;
  f.time_to_first_token = ttft_;
  f.inter_token_latency = inter_token_;
  f.e2e_latency = e2e_;
  f.queue_time = queue_;
  f.step_time = step_;
}

} // namespace kvactor
