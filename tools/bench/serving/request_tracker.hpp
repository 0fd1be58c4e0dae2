#pragma once
// request_tracker: what a benchmark run's drivers record of each request —
// when it was sent, when each token and its end arrived — and the in-flight
// count the sender waits on. Thread-safe: sinks, readers and the sender
// write from their own threads.

#include "tools/bench/serving/load_driver.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace kvactor::bench {

class request_tracker {
public:
  using clock = std::chrono::steady_clock;

  request_tracker(size_t num_requests, clock::time_point start)
    : timings_(num_requests), start_(start) {}

  // Seconds since the start.
  double now_s() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  clock::time_point start() const { return start_; }

  void sent(size_t i);
  void accepted(size_t i);
  void token(size_t i);
  void done(size_t i, finish_reason why, int32_t cached_tokens);
  void refused(size_t i, std::string why);

  // Waits until fewer than `limit` requests are in flight (0: no limit).
  void wait_for_room(int32_t limit);
  // Waits until every request ended; false at the deadline.
  bool wait_all(clock::time_point deadline);

  std::vector<request_timing> take();

private:
  void end_one(); // with the mutex held

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<request_timing> timings_;
  clock::time_point start_;
  int32_t in_flight_ = 0;
  size_t num_ended_ = 0;
};

} // namespace kvactor::bench
