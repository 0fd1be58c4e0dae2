#pragma once
// The bf16 pair products (model/forward/pair_kernels.hpp) computed one
// scalar at a time, and random cases to check them on.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/dtype.hpp"
#include "model/forward/pair_kernels.hpp"

namespace kvactor::model::layers {

// bf16 x [m, k] as the kernels read it: pair_rows(m) rows of `cols` (k
// rounded up to 32), zero-padded; and the same values widened, [m, k].
struct bf16_rows {
  int64_t m, k, cols;
  std::vector<uint16_t> bits;
  std::vector<float> values;
  bf16_rows(int64_t m_, int64_t k_, int64_t cols_, std::mt19937& rng)
      : m(m_), k(k_), cols(cols_), bits(size_t(pair_rows(m_) * cols_)), values(size_t(m_ * k_)) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = 0; c < k; ++c) {
        const uint16_t b = f32_to_bf16(normal(rng));
        bits[size_t(i * cols + c)] = b;
        values[size_t(i * k + c)] = bf16_to_f32(b);
      }
  }
};

// The portable kernel's chain: per pair, + the odd product, + the even one.
// x: [m, k], w: [n, k] (bf16 values), y: [m, n].
inline std::vector<float> odd_even_chain(const std::vector<float>& x, const std::vector<float>& w,
                                         std::vector<float> y, int64_t m, int64_t n, int64_t k,
                                         bool accumulate) {
  auto at = [k](const std::vector<float>& v, int64_t r, int64_t c) {
    return c < k ? v[size_t(r * k + c)] : 0.0f;
  };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; 2 * p < k; ++p) {
        s = s + at(x, i, 2 * p + 1) * at(w, j, 2 * p + 1);
        s = s + at(x, i, 2 * p) * at(w, j, 2 * p);
      }
      float& out = y[size_t(i * n + j)];
      out = accumulate ? s + out : s;
    }
  return y;
}

// The exact sums (in double: every product of two bf16 values is exact) and
// the bound on an fp32 chain's error: k roundings of at most the sum of
// |terms| (plus y's).
struct exact_sums {
  std::vector<double> sum, bound;
  exact_sums(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& y,
             int64_t m, int64_t n, int64_t k, bool accumulate)
    : sum(size_t(m * n)), bound(size_t(m * n)) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, a = 0;
        for (int64_t c = 0; c < k; ++c) {
          const double t = double(x[size_t(i * k + c)]) * w[size_t(j * k + c)];
          s += t;
          a += std::fabs(t);
        }
        if (accumulate) {
          s += y[size_t(i * n + j)];
          a += std::fabs(y[size_t(i * n + j)]);
        }
        sum[size_t(i * n + j)] = s;
        bound[size_t(i * n + j)] = double(k + 1) * 0x1p-24 * a + 1e-30;
      }
  }
};

} // namespace kvactor::model::layers
