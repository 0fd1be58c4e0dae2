#include "kernels/cpu_device.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "base/assert.hpp"

namespace kvactor::kernels {
namespace {

constexpr size_t alignment = 64;

class cpu_event final : public event {
public:
  explicit cpu_event(host_callback on_complete) : on_complete_(std::move(on_complete)) {}

  bool ready() const override { return done_.load(std::memory_order_acquire); }

  void wait() const override {
    std::unique_lock lock{mutex_};
    cv_.wait(lock, [this] { return done_.load(std::memory_order_acquire); });
  }

  void complete() {
    {
      std::lock_guard lock{mutex_};
      done_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
    if (on_complete_) on_complete_();
  }

private:
  host_callback on_complete_;
  std::atomic<bool> done_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
};

} // namespace

cpu_device::cpu_device(const device_options& options)
  : pool_(options.num_threads > 0
            ? options.num_threads
            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
  KVACTOR_ASSERT(options.num_streams >= 3,
                 "a device has at least compute, swap-out and swap-in streams");
  device_arena_.capacity = options.device_bytes;
  pinned_arena_.capacity = options.pinned_bytes;
  for (int32_t i = 0; i < options.num_streams; ++i) {
    auto s = std::make_unique<stream_worker>();
    s->thread = std::thread([this, raw = s.get()] { run_stream(*raw); });
    streams_.push_back(std::move(s));
  }
}

cpu_device::~cpu_device() {
  for (auto& s : streams_) {
    {
      std::lock_guard lock{s->mutex};
      s->stopping = true;
    }
    s->wake.notify_all();
  }
  for (auto& s : streams_) s->thread.join();
}

void cpu_device::run_stream(stream_worker& s) {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock{s.mutex};
      s.wake.wait(lock, [&] { return s.stopping || !s.queue.empty(); });
      if (s.queue.empty()) return;  // stopping and drained
      task = std::move(s.queue.front());
      s.queue.pop_front();
    }
    task();
  }
}

cpu_device::stream_worker& cpu_device::worker(stream_id stream) {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  return *streams_[static_cast<size_t>(stream)];
}

void cpu_device::enqueue(stream_id stream, std::function<void()> task) {
  stream_worker& s = worker(stream);
  {
    std::lock_guard lock{s.mutex};
    s.queue.push_back(std::move(task));
  }
  s.wake.notify_one();
}

std::optional<buffer> cpu_device::allocate(memory_kind kind, size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  {
    std::lock_guard lock{memory_mutex_};
    arena& a = arena_of(kind);
    if (a.used + static_cast<int64_t>(rounded) > a.capacity) return std::nullopt;
    a.used += static_cast<int64_t>(rounded);
  }
  void* data = std::aligned_alloc(alignment, rounded);
  if (data == nullptr) {
    std::lock_guard lock{memory_mutex_};
    arena_of(kind).used -= static_cast<int64_t>(rounded);
    return std::nullopt;
  }
  return buffer(this, kind, data, bytes);
}

void cpu_device::release(memory_kind kind, void* data, size_t bytes) {
  std::free(data);
  const size_t rounded = (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  std::lock_guard lock{memory_mutex_};
  arena& a = arena_of(kind);
  a.used -= static_cast<int64_t>(rounded);
  KVACTOR_ASSERT(a.used >= 0, "arena released more than it allocated");
}

memory_info cpu_device::memory(memory_kind kind) const {
  std::lock_guard lock{memory_mutex_};
  const arena& a = kind == memory_kind::device ? device_arena_ : pinned_arena_;
  return memory_info{a.capacity - a.used, a.capacity};
}

void cpu_device::copy_async(stream_id stream, void* dst, const void* src, size_t bytes) {
  enqueue(stream, [this, dst, src, bytes] {
    // NOTE: large copies are split over the pool: one core does not saturate
    // memory bandwidth.
    constexpr size_t chunk = size_t{1} << 20;
    const int64_t num_chunks = static_cast<int64_t>((bytes + chunk - 1) / chunk);
    pool_.parallel_for(num_chunks, [&](int64_t c) {
      const size_t begin = static_cast<size_t>(c) * chunk;
      std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin,
                  std::min(chunk, bytes - begin));
    });
  });
}

event_ptr cpu_device::record(stream_id stream, host_callback on_complete) {
  auto e = std::make_shared<cpu_event>(std::move(on_complete));
  enqueue(stream, [e] { e->complete(); });
  return e;
}

void cpu_device::wait_event(stream_id stream, const event_ptr& e) {
  KVACTOR_ASSERT(e != nullptr, "wait on a null event");
  // NOTE: blocks this stream's own thread, never the caller.
  enqueue(stream, [e] { e->wait(); });
}

void cpu_device::synchronize() {
  std::vector<event_ptr> events;
  for (int32_t s = 0; s < num_streams(); ++s) events.push_back(record(s));
  for (const auto& e : events) e->wait();
}

} // namespace kvactor::kernels
