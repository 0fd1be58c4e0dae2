#pragma once
// The shim's internals shared between its files (not for tests).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace kvactor::cuda_shim::detail {

// errors.cpp
void set_in_host_function(bool in);
// A fault a kernel or copy would have hit on the device: every later call fails.
void set_sticky(cudaError_t e);
cudaError_t fail(cudaError_t e); // sets the thread's last error, returns e
cudaError_t sticky_error();       // cudaSuccess until a fault
void clear_sticky();

// memory.cpp: device memory lives in one reserved region that host code
// can touch only while a stream task runs (mprotect); a host access at any
// other time faults and is reported.
void* device_alloc(std::size_t bytes);
bool device_free(void* p);
void* pinned_alloc(std::size_t bytes);
bool pinned_free(void* p);
std::size_t device_bytes_in_use();
std::size_t device_total_bytes();
// [p, p + bytes) inside one allocation of the kind kind_of(p) says?
bool in_one_allocation(const void* p, std::size_t bytes);
std::string describe(const void* p);
// Inside the device region but in no live allocation (freed, say).
bool in_unallocated_device_memory(const void* p);
// A fault on a stream thread is reported as the device's, not the host's.
void mark_stream_thread();
// Brackets every stream task: device memory is accessible in between.
void begin_device_access();
void end_device_access();

// stream.cpp
struct stream_impl;
stream_impl* stream_of(cudaStream_t s); // nullptr: destroyed or never made

} // namespace kvactor::cuda_shim::detail
