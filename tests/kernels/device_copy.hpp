#pragma once
// Blocking copies between any host memory and a device's memory, for tests:
// staged through the device's pinned host memory, because an async copy
// with pageable memory is not allowed on the CUDA device (it would block the
// caller; the CUDA shim reports it). Work enqueued on `stream` before the
// call is ordered before the copy.

#include <cstring>

#include "base/assert.hpp"
#include "kernels/device.hpp"

namespace kvactor::kernels::testing {

inline void copy_to_device(device& dev, stream_id stream, void* dst, const void* src,
                           size_t bytes) {
  if (bytes == 0) return;
  auto staging = dev.allocate(memory_kind::pinned_host, bytes);
  KVACTOR_ASSERT(staging.has_value(), "test staging allocation");
  std::memcpy(staging->data(), src, bytes);
  dev.copy_async(stream, dst, staging->data(), bytes);
  dev.record(stream)->wait(); // before the staging buffer goes
}

inline void copy_to_host(device& dev, stream_id stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  auto staging = dev.allocate(memory_kind::pinned_host, bytes);
  KVACTOR_ASSERT(staging.has_value(), "test staging allocation");
  dev.copy_async(stream, staging->data(), src, bytes);
  dev.record(stream)->wait();
  std::memcpy(dst, staging->data(), bytes);
}

} // namespace kvactor::kernels::testing
