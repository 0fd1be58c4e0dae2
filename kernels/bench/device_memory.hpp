#pragma once
// Filling a device's memory for the kernel benchmark, on any device: host
// data goes through pinned staging (an async copy of pageable memory is not
// allowed on CUDA) in stream order, and the call waits for it.

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/dtype.hpp"

namespace kvactor::kernels::bench {

// Copies `bytes` from host memory to `dst` (device memory) and waits.
inline bool upload(device& dev, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return true;
  auto staging = dev.allocate(memory_kind::pinned_host, bytes);
  if (!staging) return false;
  std::memcpy(staging->data(), src, bytes);
  dev.copy_async(streams::compute, dst, staging->data(), bytes);
  dev.record(streams::compute)->wait();  // before the staging buffer goes
  return true;
}

// Device memory holding a copy of `v` (nullopt: out of memory).
template <class T>
std::optional<buffer> upload(device& dev, const std::vector<T>& v) {
  auto b = dev.allocate(memory_kind::device, std::max<size_t>(v.size() * sizeof(T), 16));
  if (!b || !upload(dev, b->data(), v.data(), v.size() * sizeof(T))) return std::nullopt;
  return b;
}

// Fills `bytes` of device memory with normally distributed values of `type`:
// one random MiB repeated (the kernels' speed does not depend on the values,
// and a cache of several GB fills in a second).
inline bool fill_random(device& dev, void* dst, size_t bytes, dtype type) {
  constexpr size_t pattern_bytes = size_t{1} << 20;
  const size_t chunk = std::min(pattern_bytes, bytes);
  auto staging = dev.allocate(memory_kind::pinned_host, chunk);
  if (!staging) return false;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t i = 0; i < chunk / dtype_size(type); ++i)
    store_from_float(type, staging->data(), i, normal(rng));
  for (size_t at = 0; at < bytes; at += chunk)
    dev.copy_async(streams::compute, static_cast<char*>(dst) + at, staging->data(),
                   std::min(chunk, bytes - at));
  dev.record(streams::compute)->wait();
  return true;
}

// Sets `bytes` of device memory to `value`.
inline bool fill_bytes(device& dev, void* dst, size_t bytes, unsigned char value) {
  const size_t chunk = std::min(size_t{1} << 20, bytes);
  auto staging = dev.allocate(memory_kind::pinned_host, std::max<size_t>(chunk, 16));
  if (!staging) return false;
  std::memset(staging->data(), value, chunk);
  for (size_t at = 0; at < bytes; at += chunk)
    dev.copy_async(streams::compute, static_cast<char*>(dst) + at, staging->data(),
                   std::min(chunk, bytes - at));
  dev.record(streams::compute)->wait();
  return true;
}

} // namespace kvactor::kernels::bench
