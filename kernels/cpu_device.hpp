#pragma once
// cpu_device: the device that serves on the CPU.
//   stream  = a worker thread running a FIFO of tasks in order
//   event   = a completion flag with callbacks, set by a task on its stream
//   memory  = two arenas ("device" and "pinned host") with their own capacity,
//             so a swap is a real copy between pools that can run out.
// Kernels run as stream tasks and spread their work over a thread pool that
// the stream thread joins.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/thread_pool.hpp"

namespace kvactor::kernels {

class cpu_device final : public device {
public:
  explicit cpu_device(const device_options& options);
  ~cpu_device() override;  // drains every stream

  device_kind kind() const override { return device_kind::cpu; }
  std::string name() const override { return "cpu"; }
  int32_t num_streams() const override { return static_cast<int32_t>(streams_.size()); }

  std::optional<buffer> allocate(memory_kind kind, size_t bytes) override;
  memory_info memory(memory_kind kind) const override;

  void copy_async(stream_id stream, void* dst, const void* src, size_t bytes) override;
  event_ptr record(stream_id stream, host_callback on_complete = {}) override;
  void wait_event(stream_id stream, const event_ptr& e) override;
  void synchronize() override;

  void host_parallel_for(int64_t n, const std::function<void(int64_t)>& fn) override {
    pool_.parallel_for(n, fn);
  }
  // Runs task on the stream's thread after everything enqueued before it.
  void enqueue(stream_id stream, std::function<void()> task);
  thread_pool& pool() { return pool_; }

protected:
  void release(memory_kind kind, void* data, size_t bytes) override;

private:
  struct stream_worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
  };
  struct arena {
    int64_t capacity = 0;
    int64_t used = 0;
  };

  void run_stream(stream_worker& s);
  stream_worker& worker(stream_id stream);
  arena& arena_of(memory_kind kind) {
    return kind == memory_kind::device ? device_arena_ : pinned_arena_;
  }

  thread_pool pool_;
  std::vector<std::unique_ptr<stream_worker>> streams_;
  mutable std::mutex memory_mutex_;
  arena device_arena_;  // guarded by memory_mutex_
  arena pinned_arena_;  // guarded by memory_mutex_
};

} // namespace kvactor::kernels
