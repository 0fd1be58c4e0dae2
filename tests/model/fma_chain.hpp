#pragma once
// The order the fixed-order products promise (model/forward/linear_kernels.hpp),
// computed one scalar at a time, and random cases to check it on.
// NOTE: this header's users are built with -ffp-contract=off
// (tests/model/CMakeLists.txt), so `s + x * w` stays two roundings.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/dtype.hpp"
#include "model/weights.hpp"

namespace kvactor::model::layers {

// For every output: one chain over k = 0, 1, ... from zero, each step a
// fused multiply-add (fused) or a multiply, then an add; then + y when
// accumulating. x: [m, k], w: [n, k], y: [m, n].
inline std::vector<float> fma_chain(const std::vector<float>& x, const std::vector<float>& w,
                                    std::vector<float> y, int64_t m, int64_t n, int64_t k,
                                    bool accumulate, bool fused = true) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t c = 0; c < k; ++c) {
        const float a = x[size_t(i * k + c)], b = w[size_t(j * k + c)];
        sum = fused ? std::fma(a, b, sum) : sum + a * b;
      }
      float& out = y[size_t(i * n + j)];
      out = accumulate ? sum + out : sum;
    }
  return y;
}

// W: [n, k] of random bf16 values, and the same widened to fp32.
struct random_case {
  std::vector<uint16_t> w16;
  std::vector<float> w32;
  random_case(int64_t n, int64_t k, std::mt19937& rng) : w16(size_t(n * k)), w32(w16.size()) {
    std::normal_distribution<float> normal(0.0f, 0.05f);
    for (size_t i = 0; i < w16.size(); ++i) {
      w16[i] = f32_to_bf16(normal(rng));
      w32[i] = bf16_to_f32(w16[i]);
    }
  }
  weight_view view32(int64_t n, int64_t k) const {
    return weight_view{w32.data(), dtype::f32, 2, {n, k}, {}};
  }
  weight_view view16(int64_t n, int64_t k) const {
    return weight_view{w16.data(), dtype::bf16, 2, {n, k}, {}};
  }
  // [rows, cols] of random fp32 values (x, or y to accumulate onto).
  static std::vector<float> rows(int64_t rows, int64_t cols, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(size_t(rows * cols));
    for (float& e : v) e = normal(rng);
    return v;
  }
};

inline std::string shape_name(int64_t m, int64_t n, int64_t k, bool accumulate) {
  std::string s = "m " + std::to_string(m);
  s += " n " + std::to_string(n);
  s += " k " + std::to_string(k);
  if (accumulate) s += " accumulating";
  return s;
}

} // namespace kvactor::model::layers
