#pragma once
// The machine's read bandwidth as the benchmarks compare against it: a plain
// read of a buffer (sum of its 64-bit words) by every thread of a pool.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/thread_pool.hpp"

namespace kvactor::kernels::bench {

// Reads [data, data + bytes) once over the pool; returns the seconds it took.
// `sink` keeps the sums alive.
inline double timed_read(thread_pool& pool, const void* data, int64_t bytes, uint64_t& sink) {
  const auto* words = static_cast<const uint64_t*>(data);
  // NOTE: many slices, taken in turn by whichever thread is free, so that a
  // helper that wakes late still reads its share.
  const int64_t n = bytes / 8, parts = 16 * pool.num_threads();
  std::vector<uint64_t> sums(static_cast<std::size_t>(parts));
  const auto t0 = std::chrono::steady_clock::now();
  pool.parallel_for(parts, [&](int64_t p) {
    const int64_t b = n * p / parts, e = n * (p + 1) / parts;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = b;
    for (; i + 4 <= e; i += 4) {
      s0 += words[i];
      s1 += words[i + 1];
      s2 += words[i + 2];
      s3 += words[i + 3];
    }
    for (; i < e; ++i) s0 += words[i];
    sums[static_cast<std::size_t>(p)] = s0 + s1 + s2 + s3;
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (uint64_t v : sums) sink += v;
  return s;
}

// A buffer of `bytes` with its pages faulted in.
inline std::vector<uint64_t> read_buffer(int64_t bytes) {
  std::vector<uint64_t> buffer(static_cast<std::size_t>(std::max<int64_t>(bytes / 8, 1)));
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = i;
  return buffer;
}

} // namespace kvactor::kernels::bench
