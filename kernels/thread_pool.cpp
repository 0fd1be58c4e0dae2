#include "kernels/thread_pool.hpp"

#include <atomic>
#include <memory>

#include "kernels/assert.hpp"

namespace kvactor::kernels {

thread_pool::thread_pool(int num_threads) {
  KVACTOR_ASSERT(num_threads >= 1, "a pool needs at least the calling thread");
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { run_worker(); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::run_worker() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock{mutex_};
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

namespace {

struct loop_state {
  std::atomic<int64_t> next{0};
  int64_t n = 0;
  const std::function<void(int64_t)>* fn = nullptr;
  std::mutex mutex;
  std::condition_variable done;
  int64_t num_finished = 0;  // guarded by mutex

  void work() {
    int64_t finished = 0;
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      (*fn)(i);
      ++finished;
    }
    if (finished == 0) return;
    std::lock_guard lock{mutex};
    num_finished += finished;
    if (num_finished == n) done.notify_all();
  }
};

} // namespace

void thread_pool::parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // NOTE: helpers hold a shared_ptr: one that starts after the loop is over
  // finds no index left and only drops its reference.
  auto state = std::make_shared<loop_state>();
  state->n = n;
  state->fn = &fn;
  const int64_t num_helpers = std::min<int64_t>(static_cast<int64_t>(workers_.size()), n - 1);
  {
    std::lock_guard lock{mutex_};
    for (int64_t h = 0; h < num_helpers; ++h) queue_.emplace_back([state] { state->work(); });
  }
  if (num_helpers == 1) wake_.notify_one();
  else wake_.notify_all();
  state->work();
  std::unique_lock lock{state->mutex};
  state->done.wait(lock, [&] { return state->num_finished == n; });
}

} // namespace kvactor::kernels
