#pragma once
// A small fixed pool for data-parallel kernel work on the CPU device.
// parallel_for is called from a stream's worker thread (never from a CAF
// worker): the caller takes part in the work and returns when every index is
// done. Several streams may call it at once. Helpers and the caller spin
// briefly before they sleep (thread_pool.cpp), so back-to-back calls do not
// wait for a thread to wake.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kvactor::kernels {

class thread_pool {
public:
  // num_threads counts the caller: 1 means no helper threads.
  explicit thread_pool(int num_threads);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, n), spread over the pool and the caller.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

private:
  void run_worker();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::atomic<int64_t> num_queued_{0};  // queue_.size(), for the helpers' spin
  bool stopping_ = false;
};

} // namespace kvactor::kernels
