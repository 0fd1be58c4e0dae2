#include "kernels/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "base/assert.hpp"
#include "kernels/cuda/attention_split.hpp"
#include "kernels/cuda/check.hpp"

namespace kvactor::kernels {
namespace {

class cuda_event final : public event {
public:
  cuda_event(int32_t ordinal, cudaEvent_t e) : ordinal_(ordinal), event_(e) {}
  ~cuda_event() override {
    (void)cudaSetDevice(ordinal_);
    (void)cudaEventDestroy(event_);  // deferred by CUDA while still pending
  }

  bool ready() const override {
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) return false;
    KVACTOR_CUDA_CHECK(e);
    return true;
  }
  void wait() const override { KVACTOR_CUDA_CHECK(cudaEventSynchronize(event_)); }
  cudaEvent_t native() const { return event_; }

private:
  int32_t ordinal_;
  cudaEvent_t event_;
};

// What record() returns once the device has faulted: no work of the
// device's will complete, and the fault handler has said so; a waiter
// returns at once rather than hang.
class faulted_event final : public event {
public:
  bool ready() const override { return true; }
  void wait() const override {}
};

// NOTE: an exception must not unwind into CUDA's thread; a completion that
// throws is a bug of kvactor's, fatal with its message.
void run_host_callback(void* data) {
  const std::unique_ptr<host_callback> callback(static_cast<host_callback*>(data));
  try {
    (*callback)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvactor: a CUDA completion threw: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "kvactor: a CUDA completion threw\n");
    std::abort();
  }
}

constexpr auto watch_interval = std::chrono::milliseconds(100);

std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

error no_device(cudaError_t e) {
  (void)cudaGetLastError();  // clear a non-sticky error
  return error{std::string("no CUDA device: ") + cudaGetErrorString(e)};
}

} // namespace

result<std::unique_ptr<cuda_device>> cuda_device::create(const device_options& options) {
  KVACTOR_ASSERT(options.num_streams >= 3,
                 "a device has at least compute, swap-out and swap-in streams");
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return no_device(e);
  if (count == 0) return no_device(cudaErrorNoDevice);
  if (options.cuda_ordinal < 0 || options.cuda_ordinal >= count)
    return error{"no CUDA device: ordinal " + std::to_string(options.cuda_ordinal) + " of " +
                 std::to_string(count)};
  if (const cudaError_t e = cudaSetDevice(options.cuda_ordinal); e != cudaSuccess)
    return no_device(e);
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, options.cuda_ordinal); e != cudaSuccess)
    return no_device(e);
  std::unique_ptr<cuda_device> dev(new cuda_device(
    options.cuda_ordinal, "cuda:" + std::to_string(options.cuda_ordinal) + " " + prop.name,
    options.pinned_bytes, options.num_threads));
  for (int32_t i = 0; i < options.num_streams; ++i) {
    cudaStream_t s = nullptr;
    if (const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        e != cudaSuccess)
      return no_device(e);  // the destructor destroys the streams made so far
    dev->streams_.push_back(s);
  }
  // NOTE: the split-K scratch is small (about 1 MiB per stream on 132 SMs)
  // and allocated once here, so no step allocates device memory.
  dev->num_sms_ = prop.multiProcessorCount;
  const auto scratch_bytes = static_cast<size_t>(max_split_scratch_floats(dev->num_sms_)) *
                             sizeof(float) * static_cast<size_t>(options.num_streams);
  void* scratch = nullptr;
  if (const cudaError_t e = cudaMalloc(&scratch, scratch_bytes); e != cudaSuccess)
    return no_device(e);
  dev->split_scratch_ = static_cast<float*>(scratch);
  dev->watchdog_ = std::thread([d = dev.get()] { d->watch(); });
  return dev;
}

cuda_device::cuda_device(int32_t ordinal, std::string name, int64_t pinned_capacity,
                         int32_t num_threads)
    : ordinal_(ordinal), name_(std::move(name)), pinned_capacity_(pinned_capacity) {
  // NOTE: 8 threads sample 64 rows of a 128k vocabulary well inside a decode
  // step; more would only spin.
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  host_pool_ = std::make_unique<thread_pool>(num_threads > 0 ? num_threads : std::min(hardware, 8));
}

cuda_device::~cuda_device() {
  {
    std::lock_guard lock{watch_mutex_};
    stopping_ = true;
  }
  watch_wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  // NOTE: every call fails after a fault; nothing here may abort.
  (void)cudaSetDevice(ordinal_);
  for (cudaStream_t s : streams_) {
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
  }
  if (split_scratch_ != nullptr) (void)cudaFree(split_scratch_);
}

void cuda_device::set_fault_handler(fault_handler handler) {
  std::lock_guard lock{watch_mutex_};
  on_fault_ = std::move(handler);
}

void cuda_device::watch() {
  std::unique_lock lock{watch_mutex_};
  while (!stopping_) {
    watch_wake_.wait(lock, [&] { return stopping_ || num_pending_ > 0; });
    if (watch_wake_.wait_for(lock, watch_interval, [&] { return stopping_; })) return;
    if (num_pending_ == 0) continue;
    lock.unlock();
    const std::optional<std::string> fault = query_streams();
    if (fault) report_fault(*fault);
    lock.lock();
    if (fault) return;
  }
}

std::optional<std::string> cuda_device::query_streams() const {
  std::lock_guard lock{capture_mutex_};
  if (const cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess) return describe(e);
  for (cudaStream_t s : streams_)
    if (const cudaError_t e = cudaStreamQuery(s); e != cudaSuccess && e != cudaErrorNotReady)
      return describe(e);
  return std::nullopt;
}

std::variant<cudaGraphExec_t, std::string>
cuda_device::capture(stream_id stream, const std::function<bool()>& launch) {
  std::lock_guard lock{capture_mutex_};
  const cudaStream_t s = native_stream(stream);
  if (const cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      e != cudaSuccess)
    return describe(e) + " (cudaStreamBeginCapture)";
  const bool launched = launch();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  (void)cudaGetLastError(); // a failed capture's error is this call's answer, not the next's
  if (!launched || ended != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return launched ? describe(ended) + " (cudaStreamEndCapture)" : "a launch failed";
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    (void)cudaGetLastError();
    return describe(made) + " (cudaGraphInstantiate)";
  }
  return exec;
}

bool cuda_device::launch_graph(stream_id stream, cudaGraphExec_t graph) {
  cudaStream_t s = enqueue_stream(stream);
  return s != nullptr && survive(cudaGraphLaunch(graph, s), "cudaGraphLaunch");
}

void cuda_device::report_fault(const std::string& what) const {
  if (faulted_.exchange(true)) return;
  std::fprintf(stderr, "kvactor: %s faulted: %s\n", name_.c_str(), what.c_str());
  fault_handler handler;
  {
    std::lock_guard lock{watch_mutex_};
    handler = on_fault_;
  }
  if (handler) handler(what);
}

bool cuda_device::survive(cudaError_t e, const char* call) const {
  if (e == cudaSuccess) return true;
  report_fault(describe(e) + " (" + call + ")");
  return false;
}

void cuda_device::make_current() const {
  // NOTE: the current device is per host thread and callers come from any
  // CAF worker thread.
  KVACTOR_CUDA_CHECK(cudaSetDevice(ordinal_));
}

cudaStream_t cuda_device::native_stream(stream_id stream) const {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  if (!faulted()) (void)survive(cudaSetDevice(ordinal_), "cudaSetDevice");
  return streams_[static_cast<size_t>(stream)];
}

std::optional<buffer> cuda_device::allocate(memory_kind kind, size_t bytes) {
  if (faulted()) return std::nullopt;
  make_current();
  void* data = nullptr;
  if (kind == memory_kind::device) {
    const cudaError_t e = cudaMalloc(&data, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return std::nullopt;
    }
    KVACTOR_CUDA_CHECK(e);
    return buffer(this, kind, data, bytes);
  }
  {
    std::lock_guard lock{pinned_mutex_};
    if (pinned_used_ + static_cast<int64_t>(bytes) > pinned_capacity_) return std::nullopt;
    pinned_used_ += static_cast<int64_t>(bytes);
  }
  // NOTE: mapped: the swap kernel reads and writes the pinned pool directly.
  const cudaError_t e = cudaHostAlloc(&data, bytes, cudaHostAllocPortable | cudaHostAllocMapped);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::lock_guard lock{pinned_mutex_};
    pinned_used_ -= static_cast<int64_t>(bytes);
    return std::nullopt;
  }
  KVACTOR_CUDA_CHECK(e);
  return buffer(this, kind, data, bytes);
}

void cuda_device::release(memory_kind kind, void* data, size_t bytes) {
  // NOTE: after a fault every call fails; the memory goes with the process.
  if (faulted() || !survive(cudaSetDevice(ordinal_), "cudaSetDevice")) return;
  if (kind == memory_kind::device) {
    (void)survive(cudaFree(data), "cudaFree");
    return;
  }
  if (!survive(cudaFreeHost(data), "cudaFreeHost")) return;
  std::lock_guard lock{pinned_mutex_};
  pinned_used_ -= static_cast<int64_t>(bytes);
}

memory_info cuda_device::memory(memory_kind kind) const {
  if (kind == memory_kind::pinned_host) {
    std::lock_guard lock{pinned_mutex_};
    return memory_info{pinned_capacity_ - pinned_used_, pinned_capacity_};
  }
  if (faulted()) return memory_info{0, 0};
  make_current();
  size_t free = 0, total = 0;
  KVACTOR_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return memory_info{static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

cudaStream_t cuda_device::enqueue_stream(stream_id stream) {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  if (faulted() || !survive(cudaSetDevice(ordinal_), "cudaSetDevice")) return nullptr;
  return streams_[static_cast<size_t>(stream)];
}

void cuda_device::copy_async(stream_id stream, void* dst, const void* src, size_t bytes) {
  if (cudaStream_t s = enqueue_stream(stream))
    (void)survive(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync");
}

// NOTE: after a fault the callback is dropped: the fault handler answers for
// the work in flight.
event_ptr cuda_device::record(stream_id stream, host_callback on_complete) {
  cudaStream_t s = enqueue_stream(stream);
  if (s == nullptr) return std::make_shared<faulted_event>();
  cudaEvent_t e = nullptr;
  if (!survive(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags"))
    return std::make_shared<faulted_event>();
  auto ev = std::make_shared<cuda_event>(ordinal_, e);
  if (!survive(cudaEventRecord(e, s), "cudaEventRecord") || !on_complete) return ev;
  // NOTE: the host function follows the event in stream order, so it runs
  // exactly when the event has completed.
  {
    std::lock_guard lock{watch_mutex_};
    ++num_pending_;
  }
  watch_wake_.notify_all();
  auto* callback = new host_callback([this, done = std::move(on_complete)] {
    done();
    std::lock_guard lock{watch_mutex_};
    --num_pending_;
  });
  if (!survive(cudaLaunchHostFunc(s, run_host_callback, callback), "cudaLaunchHostFunc"))
    delete callback;  // NOTE: still counted: the device has faulted, the watchdog is done
  return ev;
}

void cuda_device::wait_event(stream_id stream, const event_ptr& e) {
  const auto* ce = dynamic_cast<const cuda_event*>(e.get());
  KVACTOR_ASSERT(ce != nullptr || dynamic_cast<const faulted_event*>(e.get()) != nullptr,
                 "wait on an event of another device");
  if (cudaStream_t s = enqueue_stream(stream); s != nullptr && ce != nullptr)
    (void)survive(cudaStreamWaitEvent(s, ce->native(), 0), "cudaStreamWaitEvent");
}

attention_workspace cuda_device::split_workspace(stream_id stream) const {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  const int64_t floats = max_split_scratch_floats(num_sms_);
  return attention_workspace{split_scratch_ + floats * stream, floats, num_sms_};
}

void cuda_device::synchronize() {
  if (faulted() || !survive(cudaSetDevice(ordinal_), "cudaSetDevice")) return;
  for (size_t s = 0; s < streams_.size() && !faulted(); ++s)
    (void)survive(cudaStreamSynchronize(streams_[s]), "cudaStreamSynchronize");
}

} // namespace kvactor::kernels
