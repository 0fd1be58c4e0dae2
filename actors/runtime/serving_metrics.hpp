#pragma once
// serving_metrics: the runtime's request and token counts and latency
// distributions, kept by the scheduler actor from what it sees — a
// request's admission, its first scheduling, each token it dispatches, the
// end — and each step's time. No CAF in here.

#include "actors/core/types.hpp"
#include "kvactor/kvactor.hpp"

#include <chrono>
#include <optional>
#include <unordered_map>

namespace kvactor {

// Adds one observation to h (whose bounds are set).
void observe(histogram& h, double value);

// Seconds from 1 ms to 10 min, the bounds of every latency histogram.
histogram latency_histogram();

class serving_metrics {
public:
  using clock = std::chrono::steady_clock;

  serving_metrics();

  void admitted(seq_id id, int32_t num_prompt_tokens, clock::time_point now);
  // Scheduled for a step; the first time ends its queue time.
  void scheduled(seq_id id, clock::time_point now);
  // A token dispatched: its time to first token, or an inter-token gap.
  void produced(seq_id id, clock::time_point now);
  void ended(seq_id id, bool aborted, clock::time_point now);
  void stepped(double seconds);

  // Copies the counters and histograms into f (requests, tokens, steps and
  // their busy seconds among them).
  void fill(runtime_figures& f) const;
  int32_t num_live() const { return static_cast<int32_t>(live_.size()); }
  int64_t num_admitted() const { return num_admitted_; }

private:
  struct times {
    clock::time_point admitted;
    bool scheduled = false;
    std::optional<clock::time_point> last_token;
  };

  std::unordered_map<seq_id, times> live_;
  int64_t num_admitted_ = 0;
  int64_t num_finished_ = 0;
  int64_t num_aborted_ = 0;
  int64_t num_tokens_ = 0;
  int64_t num_prompt_tokens_ = 0;
  histogram ttft_, inter_token_, e2e_, queue_, step_;
};

} // namespace kvactor
