#pragma once
// The seeded draws the stress tool's and the benchmark's workloads make.

#include <cstdint>
#include <random>
#include <vector>

namespace kvactor::tools {

// A number in [lo, hi].
inline int32_t uniform(std::mt19937_64& rng, int32_t lo, int32_t hi) {
  return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
}

// n token ids in [lowest, vocab_size).
inline std::vector<int32_t> random_tokens(std::mt19937_64& rng, int32_t n, int32_t lowest,
                                          int32_t vocab_size) {
  std::uniform_int_distribution<int32_t> token(lowest, vocab_size - 1);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (auto& t : v)
    t = token(rng);
  return v;
}

} // namespace kvactor::tools
