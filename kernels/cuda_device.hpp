#pragma once
// cuda_device: a GPU through the CUDA runtime (never the driver library).
//   stream = cudaStream_t (non-blocking), event = cudaEvent_t (no timing),
//   completions = cudaLaunchHostFunc after the event, device memory =
//   cudaMalloc, pinned host memory = cudaHostAlloc (capped by pinned_bytes).
// Built only when KVACTOR_HAVE_CUDA. A failing CUDA call after creation is
// fatal with file:line (see cuda/check.hpp).

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/thread_pool.hpp"

namespace kvactor::kernels {

class cuda_device final : public device {
public:
  // "no CUDA device: <cudaGetErrorString>" when there is none usable.
  static result<std::unique_ptr<cuda_device>> create(const device_options& options);
  ~cuda_device() override;

  device_kind kind() const override { return device_kind::cuda; }
  std::string name() const override { return name_; }
  int32_t num_streams() const override { return static_cast<int32_t>(streams_.size()); }

  std::optional<buffer> allocate(memory_kind kind, size_t bytes) override;
  memory_info memory(memory_kind kind) const override;

  void copy_async(stream_id stream, void* dst, const void* src, size_t bytes) override;
  event_ptr record(stream_id stream, host_callback on_complete = {}) override;
  void wait_event(stream_id stream, const event_ptr& e) override;
  void synchronize() override;
  // max_split_scratch_floats(SMs) floats per stream, allocated at creation.
  attention_workspace split_workspace(stream_id stream) const override;
  void host_parallel_for(int64_t n, const std::function<void(int64_t)>& fn) override {
    host_pool_->parallel_for(n, fn);
  }

  cudaStream_t native_stream(stream_id stream) const;
  int32_t ordinal() const { return ordinal_; }

protected:
  void release(memory_kind kind, void* data, size_t bytes) override;

private:
  cuda_device(int32_t ordinal, std::string name, int64_t pinned_capacity, int32_t num_threads);
  void make_current() const;

  int32_t ordinal_;
  std::string name_;
  std::vector<cudaStream_t> streams_;
  int32_t num_sms_ = 0;
  // [num_streams, max_split_scratch_floats(num_sms_)], device memory
  float* split_scratch_ = nullptr;
  mutable std::mutex pinned_mutex_;
  int64_t pinned_capacity_;
  int64_t pinned_used_ = 0;  // guarded by pinned_mutex_
  std::unique_ptr<thread_pool> host_pool_;  // host_parallel_for: the rows a step samples
};

} // namespace kvactor::kernels
