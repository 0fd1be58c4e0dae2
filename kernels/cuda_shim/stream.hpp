#pragma once
// Shim streams and events. A stream is an in-order queue drained by its own
// worker thread, so streams truly run at the same time; before a task the
// worker may sleep a seeded random while (settings: KVACTOR_SHIM_SEED,
// KVACTOR_SHIM_MAX_DELAY_US), so work on another stream that is not ordered
// by an event wait reads stale data sooner or later. An event counts its
// records; a wait or a query refers to the last record made before it.
//
// Graphs: while a stream captures (cudaStreamBeginCapture) its device tasks
// (kernels, products, copies) are recorded instead of run; cudaGraphLaunch
// queues the recorded tasks, their arguments as captured. As on a GPU, a
// query, synchronize, event or host function on a capturing stream fails
// with cudaErrorStreamCaptureUnsupported and breaks the capture, whose end
// then fails with cudaErrorStreamCaptureInvalidated.

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "kernels/cuda_shim/shim.hpp"

struct CUevent_st {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t num_recorded = 0;  // records enqueued
  uint64_t num_completed = 0; // records that the stream has reached
  unsigned flags = 0;
};

namespace kvactor::cuda_shim::detail {

using event_ref = std::shared_ptr<CUevent_st>;

struct stream_impl {
  // device: copies, kernels, products (device memory accessible while it runs);
  // control: event records and waits; host_function: cudaLaunchHostFunc.
  enum class task_kind { device, control, host_function };
  struct task {
    task_kind kind;
    const char* what;
    std::function<void()> run;
  };

  explicit stream_impl(uint64_t seed, int32_t max_delay_us);
  ~stream_impl(); // drains, then joins
  stream_impl(const stream_impl&) = delete;
  stream_impl& operator=(const stream_impl&) = delete;

  // A device task pushed while capturing is recorded instead.
  void push(task_kind kind, const char* what, std::function<void()> run);
  void synchronize(); // until every task pushed so far has run
  bool idle();        // every task pushed so far has run

  bool begin_capture(); // false when capturing already
  // The recorded tasks; nullopt when not capturing or the capture broke.
  std::optional<std::vector<task>> end_capture();
  // Whether the stream captures; if so the capture is broken.
  bool break_capture();

private:
  void drain();

  struct capture_state {
    std::vector<task> tasks;
    bool broken = false;
  };
  std::optional<capture_state> capture_; // guarded by mutex_

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<task> tasks_;
  uint64_t num_pushed_ = 0; // guarded by mutex_
  uint64_t num_done_ = 0;   // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::mt19937_64 rng_;     // worker only
  int32_t max_delay_us_;
  std::thread worker_;
};

// The event behind a handle, kept alive by whoever still needs it (a record
// or a wait in a stream): cudaEventDestroy of a pending event is deferred.
event_ref event_of(cudaEvent_t e);

} // namespace kvactor::cuda_shim::detail

struct CUgraph_st {
  std::vector<kvactor::cuda_shim::detail::stream_impl::task> tasks;
};

struct CUgraphExec_st {
  std::vector<kvactor::cuda_shim::detail::stream_impl::task> tasks;
};

struct CUstream_st {
  explicit CUstream_st(uint64_t seed, int32_t max_delay_us) : impl(seed, max_delay_us) {}
  kvactor::cuda_shim::detail::stream_impl impl;
};
