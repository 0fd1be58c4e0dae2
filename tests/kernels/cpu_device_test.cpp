// cpu_device: stream order, events across streams, callbacks, arenas.
#include "kernels/cpu_device.hpp"

#include <gtest/gtest.h>

#include <future>
#include <numeric>
#include <vector>

namespace kvactor::kernels {
namespace {

constexpr auto wait_limit = std::chrono::seconds(30);

device_options small_options() {
  device_options o;
  o.device_bytes = 1 << 20;
  o.pinned_bytes = 1 << 19;
  o.num_threads = 2;
  return o;
}

TEST(cpu_device, a_stream_runs_its_tasks_in_order) {
  cpu_device dev(small_options());
  std::vector<int> seen;  // written by the stream thread only
  for (int i = 0; i < 1000; ++i) dev.enqueue(streams::compute, [&seen, i] { seen.push_back(i); });
  dev.record(streams::compute)->wait();
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(seen, expected);
}

TEST(cpu_device, concurrent_producers_keep_their_own_order) {
  cpu_device dev(small_options());
  constexpr int num_producers = 4, per_producer = 500;
  std::vector<std::vector<int>> seen(num_producers);  // written by the stream thread only
  std::vector<std::thread> producers;
  for (int p = 0; p < num_producers; ++p)
    producers.emplace_back([&dev, &seen, p] {
      for (int i = 0; i < per_producer; ++i)
        dev.enqueue(streams::compute, [&seen, p, i] { seen[static_cast<size_t>(p)].push_back(i); });
    });
  for (auto& t : producers) t.join();
  dev.record(streams::compute)->wait();
  std::vector<int> expected(per_producer);
  std::iota(expected.begin(), expected.end(), 0);
  for (int p = 0; p < num_producers; ++p)
    EXPECT_EQ(seen[static_cast<size_t>(p)], expected) << "producer " << p;
}

TEST(cpu_device, copies_on_one_stream_see_each_other) {
  cpu_device dev(small_options());
  const size_t n = 3 << 20;  // several pool chunks
  std::vector<char> a(n), b(n, 0), c(n, 0);
  for (size_t i = 0; i < n; ++i) a[i] = static_cast<char>(i * 7 + 1);
  dev.copy_async(streams::swap_out, b.data(), a.data(), n);
  dev.copy_async(streams::swap_out, c.data(), b.data(), n);
  dev.record(streams::swap_out)->wait();
  EXPECT_EQ(c, a);
}

TEST(cpu_device, wait_event_holds_back_another_stream) {
  cpu_device dev(small_options());
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::vector<int> order;
  std::mutex mutex;
  auto note = [&](int x) {
    std::lock_guard lock{mutex};
    order.push_back(x);
  };
  dev.enqueue(streams::swap_out, [open, &note] {
    open.wait();
    note(1);
  });
  const event_ptr copied = dev.record(streams::swap_out);
  dev.wait_event(streams::compute, copied);
  dev.enqueue(streams::compute, [&note] { note(2); });
  const event_ptr computed = dev.record(streams::compute);
  // an unrelated stream is not held back
  dev.record(streams::swap_in)->wait();
  EXPECT_FALSE(copied->ready());
  EXPECT_FALSE(computed->ready());  // cannot be: its stream waits for `copied`
  gate.set_value();
  computed->wait();
  EXPECT_TRUE(copied->ready());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(cpu_device, callbacks_run_once_in_stream_order) {
  cpu_device dev(small_options());
  std::vector<int> calls;
  std::promise<void> last;
  for (int i = 0; i < 5; ++i) dev.record(streams::compute, [&calls, i] { calls.push_back(i); });
  dev.record(streams::compute, [&last] { last.set_value(); });
  ASSERT_EQ(last.get_future().wait_for(wait_limit), std::future_status::ready);
  EXPECT_EQ(calls, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(cpu_device, arenas_refuse_past_their_capacity) {
  cpu_device dev(small_options());
  auto a = dev.allocate(memory_kind::device, 600 << 10);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 64, 0u);
  EXPECT_FALSE(dev.allocate(memory_kind::device, 600 << 10).has_value());
  // the pinned arena is separate and smaller
  auto p = dev.allocate(memory_kind::pinned_host, 400 << 10);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(dev.allocate(memory_kind::pinned_host, 200 << 10).has_value());
  EXPECT_EQ(dev.memory(memory_kind::device).total_bytes, 1 << 20);
  EXPECT_EQ(dev.memory(memory_kind::device).free_bytes, (1 << 20) - (600 << 10));
  a->reset();
  EXPECT_EQ(dev.memory(memory_kind::device).free_bytes, 1 << 20);
  EXPECT_TRUE(dev.allocate(memory_kind::device, 600 << 10).has_value());
}

TEST(cpu_device, synchronize_waits_for_every_stream) {
  cpu_device dev(small_options());
  std::atomic<int> done{0};
  for (stream_id s = 0; s < dev.num_streams(); ++s)
    dev.enqueue(s, [&done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++done;
    });
  dev.synchronize();
  EXPECT_EQ(done.load(), dev.num_streams());
}

TEST(make_device, names_the_problem) {
  EXPECT_TRUE(make_device("cpu"));
  auto bad = make_device("tpu");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown device 'tpu'"), std::string::npos);
  auto bad_ordinal = make_device("cuda:x");
  ASSERT_FALSE(bad_ordinal);
  EXPECT_NE(bad_ordinal.error().message.find("bad CUDA device name"), std::string::npos);
  auto cuda = make_device("cuda");
  if (!cuda) {
    EXPECT_EQ(cuda.error().message.rfind("no CUDA device: ", 0), 0u) << cuda.error().message;
  }
}

} // namespace
} // namespace kvactor::kernels
