#include "tools/stress/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace kvactor::stress {

progress::progress(const record_book& book, int64_t num_requests, std::string label,
                   bool enabled)
  : book_(book), num_requests_(num_requests), label_(std::move(label)),
    enabled_(enabled && isatty(STDERR_FILENO)) {
  if (!enabled_)
    return;
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return stop_; }))
      draw();
  });
}

progress::~progress() {
  if (!enabled_)
    return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  draw();
  std::fputc('\n', stderr);
}

void progress::draw() {
  const double s =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t runtime = runtime_preemptions.load();
  const int64_t preemptions = runtime >= 0 ? runtime : book_.num_preemptions();
  std::fprintf(stderr,
               "\r%s: %lld/%lld requests done, %.0f tokens/s, %lld preemptions, %lld cancels   ",
               label_.c_str(), static_cast<long long>(book_.num_resolved()),
               static_cast<long long>(num_requests_),
               s > 0 ? static_cast<double>(book_.num_tokens()) / s : 0.0,
               static_cast<long long>(preemptions), static_cast<long long>(book_.num_cancels()));
}

} // namespace kvactor::stress
