#pragma once
// The CUDA shim: a test-only stand-in for the parts of the CUDA runtime and
// cuBLAS that kvactor calls, so that cuda_device.cpp, the CUDA forward pass
// and the CUDA tests run on machines without a GPU (kernels/README.md).
// Programs link it instead of libcudart/libcublas; the functions themselves
// are the real API (cuda_runtime_api.h, cublas_v2.h). This header is what
// tests and the emulated launchers (launch.hpp) need beyond that API.
//
// It enforces the rules that bite on hardware; a broken rule is a
// violation: by default a message on stderr and abort(), in tests whatever
// the handler installed with violation_handler does.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace kvactor::cuda_shim {

// What a pointer points into.
enum class pointer_kind { pageable, pinned, device };
pointer_kind kind_of(const void* p);

// Called with the message of each broken rule. The default handler prints
// "kvactor CUDA shim: <message>" and aborts; with another handler the call
// that broke the rule fails with an error instead (sticky cudaErrorIllegalAddress
// for what a kernel would have hit). Returns the previous handler.
using violation_fn = std::function<void(const std::string&)>;
violation_fn set_violation_handler(violation_fn handler);
void violation(const std::string& message);

// Settings, from the environment when the first stream is made:
//   KVACTOR_SHIM_SEED          seeds each stream's delays (default 1)
//   KVACTOR_SHIM_MAX_DELAY_US  longest delay before a task, in µs (default 200; 0: none)
struct settings {
  uint64_t seed = 1;
  int32_t max_delay_us = 200;
};
// Tests: the settings of streams made from now on.
void set_settings(const settings& s);

// Enqueues `task` on `stream` (a kernel of the emulated launchers, a cuBLAS
// product); it runs on the stream's worker thread, in stream order.
// cudaErrorInvalidResourceHandle (also the last error) for a bad stream.
cudaError_t enqueue(cudaStream_t stream, const char* what, std::function<void()> task);

// Sets this thread's last error (launches report through cudaGetLastError).
cudaError_t set_error(cudaError_t e);
// Every API entry: the host-function rule and the sticky error.
cudaError_t enter(const char* call);

// How many tasks the shim's streams have run (tests of the shim).
uint64_t num_tasks_run();
// How many host functions have been enqueued (cudaLaunchHostFunc): each is a
// round trip from the device to a host thread.
uint64_t num_host_functions();

// Tests: a device fault, as a kernel's illegal address leaves one. The
// stream task that would be the shim's `task`-th to run (counting from
// num_tasks_run(), so num_tasks_run() + 1 is the next) sets the sticky error
// `e` instead of running. As on a GPU, once the error is set no kernel, copy
// or host function runs any more (events still complete, so that a waiter
// returns, with the error), every call returns the error and
// cudaStreamQuery reports it.
void fault_at_task(uint64_t task, cudaError_t e = cudaErrorIllegalAddress);
// Tests: clears the fault and the calling thread's last error (as
// cudaDeviceReset would), so that the tests after a fault's run in the same
// process.
void clear_fault();

} // namespace kvactor::cuda_shim
