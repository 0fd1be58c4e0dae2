#pragma once
// progress: one line on the terminal, redrawn twice a second — requests
// done, tokens/s, preemptions, cancels. Silent when quiet or not a terminal.

#include "tools/stress/record_book.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kvactor::stress {

class progress {
public:
  progress(const record_book& book, int64_t num_requests, std::string label, bool enabled);
  ~progress(); // stops and ends the line
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  // Preemptions the runtime reports (when the driver can see them).
  std::atomic<int64_t> runtime_preemptions{-1};

private:
  void draw();

  const record_book& book_;
  int64_t num_requests_;
  std::string label_;
  bool enabled_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

} // namespace kvactor::stress
