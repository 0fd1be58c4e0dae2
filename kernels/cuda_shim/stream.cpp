#include "kernels/cuda_shim/stream.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>

#include "kernels/cuda_shim/detail.hpp"

namespace kvactor::cuda_shim {
namespace {

std::atomic<uint64_t> tasks_run{0};
std::atomic<uint64_t> host_functions{0};
std::atomic<uint64_t> fault_task{UINT64_MAX}; // fault_at_task
std::atomic<int> fault_error{cudaSuccess};

struct registry {
  std::mutex mutex;
  settings config;
  bool configured = false;
  uint64_t num_streams_made = 0;
  std::set<cudaStream_t> streams;
  std::map<cudaEvent_t, detail::event_ref> events;
};

registry& reg() {
  static auto* r = new registry; // never destroyed: see memory.cpp
  return *r;
}

settings from_environment() {
  settings s;
  if (const char* v = std::getenv("KVACTOR_SHIM_SEED")) s.seed = std::strtoull(v, nullptr, 10);
  if (const char* v = std::getenv("KVACTOR_SHIM_MAX_DELAY_US")) s.max_delay_us = std::atoi(v);
  return s;
}

settings& configured(registry& r) {
  if (!r.configured) {
    r.config = from_environment();
    r.configured = true;
  }
  return r.config;
}

} // namespace

void set_settings(const settings& s) {
  registry& r = reg();
  std::lock_guard lock{r.mutex};
  r.config = s;
  r.configured = true;
}

uint64_t num_tasks_run() { return tasks_run.load(); }

uint64_t num_host_functions() { return host_functions.load(); }

void fault_at_task(uint64_t task, cudaError_t e) {
  fault_error.store(e);
  fault_task.store(task);
}

void clear_fault() {
  fault_task.store(UINT64_MAX);
  detail::clear_sticky();
  (void)cudaGetLastError(); // the calling thread's
}

namespace detail {

stream_impl::stream_impl(uint64_t seed, int32_t max_delay_us)
    : rng_(seed), max_delay_us_(max_delay_us), worker_([this] { drain(); }) {}

stream_impl::~stream_impl() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void stream_impl::push(task_kind kind, const char* what, std::function<void()> run) {
  {
    std::lock_guard lock{mutex_};
    if (capture_) {
      if (kind == task_kind::device)
        capture_->tasks.push_back(task{kind, what, std::move(run)});
      else
        capture_->broken = true;
      return;
    }
    tasks_.push_back(task{kind, what, std::move(run)});
    ++num_pushed_;
  }
  changed_.notify_all();
}

bool stream_impl::begin_capture() {
  std::lock_guard lock{mutex_};
  if (capture_) return false;
  capture_.emplace();
  return true;
}

std::optional<std::vector<stream_impl::task>> stream_impl::end_capture() {
  std::lock_guard lock{mutex_};
  if (!capture_) return std::nullopt;
  capture_state c = std::move(*capture_);
  capture_.reset();
  if (c.broken) return std::nullopt;
  return std::move(c.tasks);
}

bool stream_impl::break_capture() {
  std::lock_guard lock{mutex_};
  if (!capture_) return false;
  capture_->broken = true;
  return true;
}

bool stream_impl::idle() {
  std::lock_guard lock{mutex_};
  return num_done_ >= num_pushed_;
}

void stream_impl::synchronize() {
  std::unique_lock lock{mutex_};
  const uint64_t target = num_pushed_;
  changed_.wait(lock, [&] { return num_done_ >= target; });
}

void stream_impl::drain() {
  mark_stream_thread();
  bool accessing = false; // holds device access (memory.cpp)
  std::unique_lock lock{mutex_};
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return; // stopping, and everything has run
    task t = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    // NOTE: half the tasks start late, by up to max_delay_us_: a stream
    // that runs ahead of another only because the host enqueued it first is
    // not ordered after it.
    if (max_delay_us_ > 0 && (rng_() & 1) != 0)
      std::this_thread::sleep_for(
        std::chrono::microseconds(rng_() % static_cast<uint64_t>(max_delay_us_ + 1)));
    // NOTE: device memory opens for the first device task of a busy spell
    // and closes when the queue runs dry or a host function comes: closing
    // after every task would cost two mprotect calls per task.
    if (t.kind == task_kind::device && !accessing) {
      begin_device_access();
      accessing = true;
    } else if (t.kind == task_kind::host_function && accessing) {
      end_device_access();
      accessing = false;
    }
    // NOTE: the count decides which task faults (fault_at_task); after a
    // fault only control tasks (events) run.
    if (tasks_run.fetch_add(1) + 1 >= fault_task.load())
      set_sticky(static_cast<cudaError_t>(fault_error.load()));
    if (t.kind == task_kind::control || sticky_error() == cudaSuccess) {
      if (t.kind == task_kind::host_function) set_in_host_function(true);
      t.run();
      set_in_host_function(false);
    }
    lock.lock();
    if (accessing && tasks_.empty()) {
      end_device_access();
      accessing = false;
    }
    ++num_done_;
    changed_.notify_all();
  }
}

stream_impl* stream_of(cudaStream_t s) {
  registry& r = reg();
  std::lock_guard lock{r.mutex};
  if (s == nullptr) {
    // NOTE: the legacy default stream, made on first use; the shim gives it
    // no implicit synchronisation with other streams (kvactor never uses it
    // for work that other streams see).
    static cudaStream_t default_stream = [&] {
      const settings& c = configured(r);
      return new CUstream_st(c.seed * 1000003u + r.num_streams_made++, c.max_delay_us);
    }();
    return &default_stream->impl;
  }
  return r.streams.count(s) != 0 ? &s->impl : nullptr;
}

event_ref event_of(cudaEvent_t e) {
  registry& r = reg();
  std::lock_guard lock{r.mutex};
  const auto it = r.events.find(e);
  return it != r.events.end() ? it->second : nullptr;
}

} // namespace detail
} // namespace kvactor::cuda_shim

namespace shim = kvactor::cuda_shim;
namespace detail = kvactor::cuda_shim::detail;

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  if (const cudaError_t e = shim::enter("cudaStreamCreateWithFlags"); e != cudaSuccess) return e;
  if (stream == nullptr || (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) != 0)
    return detail::fail(cudaErrorInvalidValue);
  shim::registry& r = shim::reg();
  std::lock_guard lock{r.mutex};
  const shim::settings& c = shim::configured(r);
  auto* s = new CUstream_st(c.seed * 1000003u + r.num_streams_made++, c.max_delay_us);
  r.streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaStreamDestroy"); e != cudaSuccess) return e;
  shim::registry& r = shim::reg();
  {
    std::lock_guard lock{r.mutex};
    if (stream == nullptr || r.streams.erase(stream) == 0)
      return detail::fail(cudaErrorInvalidResourceHandle);
  }
  delete stream; // NOTE: as CUDA, work already enqueued still runs (the destructor drains it)
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaStreamSynchronize"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  s->synchronize();
  return shim::enter("cudaStreamSynchronize"); // a fault in the work waited for
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaStreamQuery"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  // NOTE: cudaErrorNotReady is not an error: it does not become the last error.
  return s->idle() ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (const cudaError_t e = shim::enter("cudaEventCreateWithFlags"); e != cudaSuccess) return e;
  if (event == nullptr) return detail::fail(cudaErrorInvalidValue);
  auto ev = std::make_shared<CUevent_st>();
  ev->flags = flags;
  shim::registry& r = shim::reg();
  std::lock_guard lock{r.mutex};
  r.events[ev.get()] = ev;
  *event = ev.get();
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (const cudaError_t e = shim::enter("cudaEventDestroy"); e != cudaSuccess) return e;
  shim::registry& r = shim::reg();
  std::lock_guard lock{r.mutex};
  if (r.events.erase(event) == 0) return detail::fail(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaEventRecord"); e != cudaSuccess) return e;
  detail::event_ref ev = detail::event_of(event);
  detail::stream_impl* s = detail::stream_of(stream);
  if (ev == nullptr || s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  uint64_t n = 0;
  {
    std::lock_guard lock{ev->mutex};
    n = ++ev->num_recorded;
  }
  s->push(detail::stream_impl::task_kind::control, "cudaEventRecord", [ev, n] {
    {
      std::lock_guard lock{ev->mutex};
      if (ev->num_completed < n) ev->num_completed = n;
    }
    ev->changed.notify_all();
  });
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (const cudaError_t e = shim::enter("cudaStreamWaitEvent"); e != cudaSuccess) return e;
  detail::event_ref ev = detail::event_of(event);
  detail::stream_impl* s = detail::stream_of(stream);
  if (ev == nullptr || s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (flags != 0) return detail::fail(cudaErrorInvalidValue);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  uint64_t n = 0;
  {
    std::lock_guard lock{ev->mutex};
    n = ev->num_recorded; // the last record made before this call; none: nothing to wait for
  }
  if (n == 0) return cudaSuccess;
  s->push(detail::stream_impl::task_kind::control, "cudaStreamWaitEvent", [ev, n] {
    std::unique_lock lock{ev->mutex};
    ev->changed.wait(lock, [&] { return ev->num_completed >= n; });
  });
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (const cudaError_t e = shim::enter("cudaEventQuery"); e != cudaSuccess) return e;
  detail::event_ref ev = detail::event_of(event);
  if (ev == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  std::lock_guard lock{ev->mutex};
  // NOTE: cudaErrorNotReady is not an error: it does not become the last error.
  return ev->num_completed >= ev->num_recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (const cudaError_t e = shim::enter("cudaEventSynchronize"); e != cudaSuccess) return e;
  detail::event_ref ev = detail::event_of(event);
  if (ev == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  {
    std::unique_lock lock{ev->mutex};
    const uint64_t n = ev->num_recorded;
    ev->changed.wait(lock, [&] { return ev->num_completed >= n; });
  }
  return shim::enter("cudaEventSynchronize");
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  if (const cudaError_t e = shim::enter("cudaLaunchHostFunc"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (fn == nullptr) return detail::fail(cudaErrorInvalidValue);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  shim::host_functions.fetch_add(1);
  s->push(detail::stream_impl::task_kind::host_function, "cudaLaunchHostFunc",
          [fn, user_data] { fn(user_data); });
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (const cudaError_t e = shim::enter("cudaStreamBeginCapture"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  // NOTE: the legacy default stream cannot capture.
  if (s == nullptr || stream == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed)
    return detail::fail(cudaErrorInvalidValue);
  if (!s->begin_capture()) return detail::fail(cudaErrorIllegalState);
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (const cudaError_t e = shim::enter("cudaStreamEndCapture"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (graph == nullptr) return detail::fail(cudaErrorInvalidValue);
  auto tasks = s->end_capture();
  if (!tasks) return detail::fail(cudaErrorStreamCaptureInvalidated);
  *graph = new CUgraph_st{std::move(*tasks)};
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags) {
  if (const cudaError_t e = shim::enter("cudaGraphInstantiate"); e != cudaSuccess) return e;
  if (exec == nullptr || graph == nullptr || flags != 0) return detail::fail(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->tasks};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaGraphLaunch"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr || exec == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (s->break_capture()) return detail::fail(cudaErrorStreamCaptureUnsupported);
  for (const auto& t : exec->tasks) s->push(t.kind, t.what, t.run);
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (const cudaError_t e = shim::enter("cudaGraphDestroy"); e != cudaSuccess) return e;
  if (graph == nullptr) return detail::fail(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (const cudaError_t e = shim::enter("cudaGraphExecDestroy"); e != cudaSuccess) return e;
  if (exec == nullptr) return detail::fail(cudaErrorInvalidValue);
  // NOTE: as CUDA, launches already queued still run (they hold copies).
  delete exec;
  return cudaSuccess;
}

} // extern "C"

namespace kvactor::cuda_shim {

cudaError_t enqueue(cudaStream_t stream, const char* what, std::function<void()> task) {
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  s->push(detail::stream_impl::task_kind::device, what, std::move(task));
  return cudaSuccess;
}

} // namespace kvactor::cuda_shim
