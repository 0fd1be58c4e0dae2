// The shim's errors: each thread's last error, the sticky error that a
// device fault leaves, the host-function rule and violations.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "kernels/cuda_shim/detail.hpp"
#include "kernels/cuda_shim/shim.hpp"

namespace kvactor::cuda_shim {
namespace {

thread_local cudaError_t last_error = cudaSuccess;
thread_local bool in_host_function = false;
std::atomic<int> sticky{cudaSuccess};

std::mutex handler_mutex;
violation_fn& handler() {
  static violation_fn h;
  return h;
}

} // namespace

violation_fn set_violation_handler(violation_fn h) {
  std::lock_guard lock{handler_mutex};
  return std::exchange(handler(), std::move(h));
}

void violation(const std::string& message) {
  violation_fn h;
  {
    std::lock_guard lock{handler_mutex};
    h = handler();
  }
  if (h) {
    h(message);
    return;
  }
  std::fprintf(stderr, "kvactor CUDA shim: %s\n", message.c_str());
  std::abort();
}

cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

cudaError_t enter(const char* call) {
  if (in_host_function) {
    violation(std::string(call) +
              " called from a host function (cudaLaunchHostFunc): a host function must not "
              "call the CUDA API");
    return detail::fail(cudaErrorNotPermitted);
  }
  if (const auto s = static_cast<cudaError_t>(sticky.load()); s != cudaSuccess)
    return detail::fail(s);
  return cudaSuccess;
}

namespace detail {

void set_in_host_function(bool in) { in_host_function = in; }

void set_sticky(cudaError_t e) {
  int expected = cudaSuccess;
  sticky.compare_exchange_strong(expected, e);
}

cudaError_t fail(cudaError_t e) { return set_error(e); }

cudaError_t sticky_error() { return static_cast<cudaError_t>(sticky.load()); }

void clear_sticky() { sticky.store(cudaSuccess); }

} // namespace detail
} // namespace kvactor::cuda_shim

namespace {

struct error_text {
  cudaError_t code;
  const char* name;
  const char* text;
};

// NOTE: the texts are the real runtime's.
constexpr error_text error_texts[] = {
  {cudaSuccess, "cudaSuccess", "no error"},
  {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
  {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
  {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
   "invalid configuration argument"},
  {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
  {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
  {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
  {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
  {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
  {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
  {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
  {cudaErrorIllegalState, "cudaErrorIllegalState",
   "the operation cannot be performed in the present state"},
  {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
   "operation not permitted when stream is capturing"},
  {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
   "operation failed due to a previous error during capture"},
};

const error_text* find_text(cudaError_t e) {
  for (const error_text& t : error_texts)
    if (t.code == e) return &t;
  return nullptr;
}

} // namespace

extern "C" {

cudaError_t cudaGetLastError() {
  if (kvactor::cuda_shim::in_host_function) // enter reports the violation
    (void)kvactor::cuda_shim::enter("cudaGetLastError");
  if (const auto s = static_cast<cudaError_t>(kvactor::cuda_shim::sticky.load()); s != cudaSuccess)
    return s;
  return std::exchange(kvactor::cuda_shim::last_error, cudaSuccess);
}

cudaError_t cudaPeekAtLastError() {
  if (kvactor::cuda_shim::in_host_function) // enter reports the violation
    (void)kvactor::cuda_shim::enter("cudaPeekAtLastError");
  if (const auto s = static_cast<cudaError_t>(kvactor::cuda_shim::sticky.load()); s != cudaSuccess)
    return s;
  return kvactor::cuda_shim::last_error;
}

const char* cudaGetErrorName(cudaError_t e) {
  const error_text* t = find_text(e);
  return t != nullptr ? t->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  const error_text* t = find_text(e);
  return t != nullptr ? t->text : "unknown error";
}

} // extern "C"
