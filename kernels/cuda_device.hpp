#pragma once
// cuda_device: a GPU through the CUDA runtime (never the driver library).
//   stream = cudaStream_t (non-blocking), event = cudaEvent_t (no timing),
//   completions = cudaLaunchHostFunc after the event, device memory =
//   cudaMalloc, pinned host memory = cudaHostAlloc (capped by pinned_bytes).
// Built only when KVACTOR_HAVE_CUDA.
//
// Faults: CUDA never runs a host function after a fault (an illegal address,
// say: the error is sticky), so a completion would never come. While
// completions are outstanding a watchdog thread queries the streams every
// 100 ms; the first error it sees is the device's fault, reported once to the
// fault handler with the error's name. A failing call of the device's own
// (an enqueue, a free) reports a fault the same way; from the fault on,
// enqueues do nothing and frees are skipped, so a runtime that stops sending
// work shuts down cleanly. A kernel launch that fails (ops.cpp) reports the
// fault too: a fault can come while the host still enqueues the kernels of
// the step that hit it.
//
// Graphs: capture records what a function launches on a stream as a CUDA
// graph (nothing runs) and launch_graph replays it there. While a stream
// captures, the watchdog leaves every stream alone: a query of a capturing
// stream would break the capture.

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <mutex>
#include <thread>
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
  void set_fault_handler(fault_handler handler) override;
  bool faulted() const { return faulted_.load(); }

  // The stream's handle, this device made current (a failure to make it
  // current is reported as the fault).
  cudaStream_t native_stream(stream_id stream) const;
  // What `launch` enqueues on `stream`, captured as an instantiated graph,
  // or why not: `launch` returns false (a launch failed) or CUDA refused
  // the capture, with the error's name. Not a fault: the stream is as it
  // was. Only the calling thread may use the stream meanwhile.
  std::variant<cudaGraphExec_t, std::string> capture(stream_id stream,
                                                      const std::function<bool()>& launch);
  // Queues a graph made by capture on `stream` (a failure is the fault).
  bool launch_graph(stream_id stream, cudaGraphExec_t graph);
  // A kernel launch's result (ops.cpp): an error is the device's fault.
  void launched(cudaError_t e, const char* kernel) const { (void)survive(e, kernel); }
  int32_t ordinal() const { return ordinal_; }

protected:
  void release(memory_kind kind, void* data, size_t bytes) override;

private:
  cuda_device(int32_t ordinal, std::string name, int64_t pinned_capacity, int32_t num_threads);
  void make_current() const;
  // The watchdog thread's loop, and one look at every stream.
  void watch();
  std::optional<std::string> query_streams() const;
  // Records the fault (the first one only) and tells the handler.
  void report_fault(const std::string& what) const;
  // false, having reported the fault, when e is an error.
  bool survive(cudaError_t e, const char* call) const;
  // The stream's handle, this device made current; nullptr once it has faulted.
  cudaStream_t enqueue_stream(stream_id stream);

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

  mutable std::atomic<bool> faulted_{false};
  // Held by a capture throughout and by the watchdog while it queries.
  mutable std::mutex capture_mutex_;
  mutable std::mutex watch_mutex_;
  std::condition_variable watch_wake_;
  int64_t num_pending_ = 0;  // completions enqueued and not yet run; guarded by watch_mutex_
  bool stopping_ = false;    // guarded by watch_mutex_
  fault_handler on_fault_;   // guarded by watch_mutex_
  std::thread watchdog_;
};

} // namespace kvactor::kernels
