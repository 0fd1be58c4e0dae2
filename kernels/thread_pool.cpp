#include "kernels/thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <memory>

#include <immintrin.h>

#include "base/assert.hpp"

namespace kvactor::kernels {

namespace {

// NOTE: a forward step is dozens of parallel_for calls a few microseconds
// apart, and a thread woken from a futex takes tens of microseconds to run:
// the helper would come late to every call (and the caller would do the
// call's work alone), the caller late to every call's end. So both spin for
// a short while before they sleep; between steps they sleep.
constexpr auto spin_for = std::chrono::microseconds(200);

// Spins until ready() or spin_for has passed; returns ready().
template <class Ready>
bool spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + spin_for;
  for (int i = 0; !ready(); ++i) {
    _mm_pause();
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return ready();
  }
  return true;
}

} // namespace

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
    spin_until([this] { return num_queued_.load(std::memory_order_acquire) > 0; });
    std::function<void()> task;
    {
      std::unique_lock lock{mutex_};
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      num_queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

namespace {

struct loop_state {
  std::atomic<int64_t> next{0};
  int64_t n = 0;
  const std::function<void(int64_t)>* fn = nullptr;
  std::atomic<int64_t> num_finished{0};
  std::mutex mutex;  // for the caller's sleep once its spin is over
  std::condition_variable done;

  void work() {
    int64_t finished = 0;
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      (*fn)(i);
      ++finished;
    }
    if (finished == 0) return;
    if (num_finished.fetch_add(finished, std::memory_order_acq_rel) + finished == n) {
      // NOTE: so that the notify cannot fall between the caller's check and its wait
      std::lock_guard lock{mutex};
      done.notify_all();
    }
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
    num_queued_.fetch_add(num_helpers, std::memory_order_release);
  }
  if (num_helpers == 1) wake_.notify_one();
  else wake_.notify_all();
  state->work();
  auto all_done = [&] { return state->num_finished.load(std::memory_order_acquire) == n; };
  if (spin_until(all_done)) return;
  std::unique_lock lock{state->mutex};
  state->done.wait(lock, all_done);
}

} // namespace kvactor::kernels
