#include "kernels/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
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

void run_host_callback(void* data) {
  const std::unique_ptr<host_callback> callback(static_cast<host_callback*>(data));
  (*callback)();
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
  make_current();
  for (cudaStream_t s : streams_) {
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
  }
  if (split_scratch_ != nullptr) (void)cudaFree(split_scratch_);
}

void cuda_device::make_current() const {
  // NOTE: the current device is per host thread and callers come from any
  // CAF worker thread.
  KVACTOR_CUDA_CHECK(cudaSetDevice(ordinal_));
}

cudaStream_t cuda_device::native_stream(stream_id stream) const {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  make_current();
  return streams_[static_cast<size_t>(stream)];
}

std::optional<buffer> cuda_device::allocate(memory_kind kind, size_t bytes) {
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
  make_current();
  if (kind == memory_kind::device) {
    KVACTOR_CUDA_CHECK(cudaFree(data));
    return;
  }
  KVACTOR_CUDA_CHECK(cudaFreeHost(data));
  std::lock_guard lock{pinned_mutex_};
  pinned_used_ -= static_cast<int64_t>(bytes);
}

memory_info cuda_device::memory(memory_kind kind) const {
  if (kind == memory_kind::pinned_host) {
    std::lock_guard lock{pinned_mutex_};
    return memory_info{pinned_capacity_ - pinned_used_, pinned_capacity_};
  }
  make_current();
  size_t free = 0, total = 0;
  KVACTOR_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return memory_info{static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

void cuda_device::copy_async(stream_id stream, void* dst, const void* src, size_t bytes) {
  KVACTOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, native_stream(stream)));
}

event_ptr cuda_device::record(stream_id stream, host_callback on_complete) {
  cudaStream_t s = native_stream(stream);
  cudaEvent_t e = nullptr;
  KVACTOR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  auto ev = std::make_shared<cuda_event>(ordinal_, e);
  KVACTOR_CUDA_CHECK(cudaEventRecord(e, s));
  if (on_complete) {
    // NOTE: the host function follows the event in stream order, so it runs
    // exactly when the event has completed.
    auto* callback = new host_callback(std::move(on_complete));
    const cudaError_t err = cudaLaunchHostFunc(s, run_host_callback, callback);
    if (err != cudaSuccess) delete callback;
    KVACTOR_CUDA_CHECK(err);
  }
  return ev;
}

void cuda_device::wait_event(stream_id stream, const event_ptr& e) {
  const auto* ce = dynamic_cast<const cuda_event*>(e.get());
  KVACTOR_ASSERT(ce != nullptr, "wait on an event of another device");
  KVACTOR_CUDA_CHECK(cudaStreamWaitEvent(native_stream(stream), ce->native(), 0));
}

attention_workspace cuda_device::split_workspace(stream_id stream) const {
  KVACTOR_ASSERT(stream >= 0 && stream < num_streams(), "no such stream");
  const int64_t floats = max_split_scratch_floats(num_sms_);
  return attention_workspace{split_scratch_ + floats * stream, floats, num_sms_};
}

void cuda_device::synchronize() {
  for (int32_t s = 0; s < num_streams(); ++s)
    KVACTOR_CUDA_CHECK(cudaStreamSynchronize(native_stream(s)));
}

} // namespace kvactor::kernels
