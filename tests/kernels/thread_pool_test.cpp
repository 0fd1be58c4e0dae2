// thread_pool: every index runs once, whoever runs it, whether the helpers
// are spinning or asleep, from several callers at once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "kernels/thread_pool.hpp"

namespace kvactor::kernels {
namespace {

// Runs parallel_for(n) and checks that every index ran exactly once.
void expect_each_index_once(thread_pool& pool, int64_t n) {
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  pool.parallel_for(n, [&](int64_t i) { runs[static_cast<size_t>(i)].fetch_add(1); });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
}

TEST(thread_pool, runs_every_index_once) {
  for (int threads : {1, 2, 4}) {
    thread_pool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 17, 1000}) expect_each_index_once(pool, n);
  }
}

TEST(thread_pool, calls_back_to_back_and_after_the_helpers_slept) {
  thread_pool pool(2);
  for (int call = 0; call < 2000; ++call) expect_each_index_once(pool, 2);
  for (int call = 0; call < 5; ++call) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // past the spin: helpers asleep
    expect_each_index_once(pool, 8);
  }
}

TEST(thread_pool, helpers_take_part) {
  thread_pool pool(2);
  // Each index waits until two threads are inside the loop, or gives up:
  // with a helper that never joined, no index would ever see two.
  std::set<std::thread::id> seen;
  std::mutex m;
  std::atomic<int> inside{0};
  bool both = false;
  for (int attempt = 0; attempt < 50 && !both; ++attempt) {
    pool.parallel_for(2, [&](int64_t) {
      inside.fetch_add(1);
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      while (inside.load() < 2 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      std::lock_guard lock(m);
      seen.insert(std::this_thread::get_id());
    });
    both = inside.load() == 2 && seen.size() == 2;
    inside = 0;
    seen.clear();
  }
  EXPECT_TRUE(both) << "the helper never ran an index beside the caller";
}

TEST(thread_pool, several_callers_at_once) {
  thread_pool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int call = 0; call < 300; ++call) {
        std::vector<std::atomic<int>> runs(33);
        pool.parallel_for(33, [&](int64_t i) { runs[static_cast<size_t>(i)].fetch_add(1); });
        for (auto& r : runs) failures += r.load() != 1;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

} // namespace
} // namespace kvactor::kernels
