#pragma once
// The Device the executor owns: in-order streams, events, device and pinned
// host memory, async copies. Two implementations: cpu_device (worker threads)
// and cuda_device (CUDA runtime; built when KVACTOR_HAVE_CUDA).
//
// Threading contract: every call below only enqueues work and returns at once
// (except event::wait and synchronize, which are for tests and tools, never
// for a CAF worker thread). Completions come back through callbacks that run
// on a device thread: they must be short and must not block or call the
// device (post a message to an actor and return). A callback must not hold
// the last reference to an event either: destroying a CUDA event is a device
// call.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/params.hpp"
#include "base/result.hpp"

namespace kvactor::kernels {

enum class device_kind { cpu, cuda };
enum class memory_kind { device, pinned_host };

using stream_id = int32_t;
// The streams every device has (device_options::num_streams >= 3).
namespace streams {
constexpr stream_id compute = 0;
constexpr stream_id swap_out = 1;
constexpr stream_id swap_in = 2;
} // namespace streams

using host_callback = std::function<void()>;
// Called once, on a thread of the device's, when a fault has left the device
// unusable (a CUDA kernel's illegal address, say), with the error's name and
// text: the work in flight then never completes and its callbacks never run.
using fault_handler = std::function<void(const std::string&)>;

// Marks a point in a stream; completes when the stream has run everything
// enqueued before it.
class event {
public:
  virtual ~event() = default;
  virtual bool ready() const = 0;  // polls, never blocks
  virtual void wait() const = 0;   // blocks the calling thread until ready
};
using event_ptr = std::shared_ptr<const event>;

struct memory_info {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

class device;

// Owns one allocation; frees it on destruction. Move-only. Must not outlive
// its device.
class buffer {
public:
  buffer() = default;
  buffer(device* owner, memory_kind kind, void* data, size_t bytes)
      : owner_(owner), kind_(kind), data_(data), bytes_(bytes) {}
  buffer(buffer&& other) noexcept { *this = std::move(other); }
  buffer& operator=(buffer&& other) noexcept;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer() { reset(); }

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  memory_kind kind() const { return kind_; }
  void reset();

private:
  device* owner_ = nullptr;
  memory_kind kind_ = memory_kind::device;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

struct device_options {
  int32_t num_streams = 3;
  // cpu: capacities of the two arenas; cuda: pinned_bytes caps the host pool.
  int64_t device_bytes = int64_t{1} << 30;
  int64_t pinned_bytes = int64_t{1} << 30;
  // cpu: kernel threads; cuda: host threads that sample a step's rows
  // (host_parallel_for). 0: the hardware concurrency (cuda: at most 8).
  int32_t num_threads = 0;
  int32_t cuda_ordinal = 0;
};

class device {
public:
  virtual ~device() = default;

  virtual device_kind kind() const = 0;
  virtual std::string name() const = 0;
  virtual int32_t num_streams() const = 0;

  // Out of capacity (or out of device memory) is std::nullopt.
  virtual std::optional<buffer> allocate(memory_kind kind, size_t bytes) = 0;
  virtual memory_info memory(memory_kind kind) const = 0;

  // Copies bytes in stream order; src and dst may be in either memory kind.
  virtual void copy_async(stream_id stream, void* dst, const void* src, size_t bytes) = 0;
  // Records an event at the current end of the stream; on_complete (if any)
  // runs once it completes.
  virtual event_ptr record(stream_id stream, host_callback on_complete = {}) = 0;
  // Work enqueued on `stream` after this call starts only once `e` completed.
  virtual void wait_event(stream_id stream, const event_ptr& e) = 0;
  // Blocks until every stream is idle (tests, tools, shutdown).
  virtual void synchronize() = 0;
  // Scratch for split-K decode attention of work on `stream`
  // (paged_attention_params::workspace); empty where attention never splits
  // (CPU). Owned by the device, one per stream, reused by every launch.
  virtual attention_workspace split_workspace(stream_id) const { return {}; }
  // Calls fn(i) for every i in [0, n) on the device's host threads and
  // returns when all are done; only from a device thread (a stream's task or
  // completion), spread over the device's host threads (device_options::
  // num_threads); in turn on the calling thread where a device has none.
  virtual void host_parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
    for (int64_t i = 0; i < n; ++i)
      fn(i);
  }
  // Who hears of a fault (fault_handler); set before any work is enqueued.
  // The CPU device never faults: its kernels' errors are the host's.
  virtual void set_fault_handler(fault_handler) {}

protected:
  friend class buffer;
  virtual void release(memory_kind kind, void* data, size_t bytes) = 0;
};

// "cpu" or "cuda" (or "cuda:N" for ordinal N); an unknown name, a build
// without CUDA or a host without a usable GPU is an error value.
result<std::unique_ptr<device>> make_device(std::string_view name,
                                            const device_options& options = {});

} // namespace kvactor::kernels
