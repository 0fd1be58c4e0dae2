#pragma once
// jitter: a seeded fault for stress runs. Reports that a quiet machine
// delivers at once (a step's output, a swap's completion, a refused swap-in)
// are held back a random 0..max_ms each, so that the interleavings a loaded
// machine produces show up on an idle one too, reproducibly per seed.
// max_ms 0 (the default) delays nothing. No CAF in here.

#include <chrono>
#include <cstdint>
#include <random>

namespace kvactor {

struct jitter_options {
  int32_t max_ms = 0; // 0: off
  uint64_t seed = 1;
};

class jitter {
public:
  jitter() = default;
  explicit jitter(jitter_options options)
    : rng_(options.seed), delay_(0, options.max_ms > 0 ? options.max_ms : 0) {}

  // The next delay: 0 when off. Not thread-safe: one owner draws.
  std::chrono::milliseconds next() { return std::chrono::milliseconds(delay_(rng_)); }

private:
  std::mt19937_64 rng_{1};
  std::uniform_int_distribution<int32_t> delay_{0, 0};
};

} // namespace kvactor
