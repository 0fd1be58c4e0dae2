// The CPU layers on hand-checked values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/forward/layers.hpp"
#include "model/forward/linear_kernels.hpp"
#include "tests/model/fma_chain.hpp"

namespace kvactor::model::layers {
namespace {

weight_view matrix(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return weight_view{v.data(), dtype::f32, 2, {rows, cols}};
}

TEST(layers, rope_rotates_the_halves_of_each_head) {
  kernels::thread_pool pool(2);
  // One token, two heads of D = 4: pairs (0, 2) and (1, 3).
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  const float c[2] = {0.0f, 1.0f}, s[2] = {1.0f, 0.0f}; // pair 0 by 90 degrees, pair 1 unchanged
  rope(pool, x.data(), 8, 1, 2, 4, c, s);
  EXPECT_EQ(x, (std::vector<float>{-3, 2, 1, 4, -7, 6, 5, 8}));
}

TEST(layers, rope_angles_are_position_times_inv_freq) {
  const std::vector<int32_t> pos{0, 3};
  const std::vector<double> inv{1.0, 0.5};
  std::vector<float> c(4), s(4);
  rope_angles(pos, inv, c.data(), s.data());
  EXPECT_FLOAT_EQ(c[0], 1.0f);
  EXPECT_FLOAT_EQ(s[3], static_cast<float>(std::sin(1.5)));
  EXPECT_FLOAT_EQ(c[2], static_cast<float>(std::cos(3.0)));
}

TEST(layers, rms_norm_scales_by_weight) {
  kernels::thread_pool pool(2);
  const std::vector<float> x{3, 4}, w{1, 2};
  std::vector<float> out(2);
  rms_norm(pool, x.data(), 2, out.data(), 2, 1, 2, w.data(), 0.0f);
  const float inv = 1.0f / std::sqrt(12.5f);
  EXPECT_FLOAT_EQ(out[0], 3 * inv);
  EXPECT_FLOAT_EQ(out[1], 8 * inv);
}

TEST(layers, linear_is_x_times_w_transposed_and_accumulates) {
  kernels::thread_pool pool(2);
  // 40 output columns so that the split over the pool has several parts.
  const int64_t n = 40, k = 3, m = 2;
  std::vector<float> w(size_t(n * k)), x{1, 2, 3, -1, 0, 1};
  for (int64_t i = 0; i < n * k; ++i) w[size_t(i)] = float(i % 7) - 3;
  std::vector<float> y(size_t(m * n), 1.0f);
  linear(pool, x.data(), k, m, matrix(w, n, k), y.data(), n, true);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float want = 1.0f;
      for (int64_t i = 0; i < k; ++i) want += x[size_t(r * k + i)] * w[size_t(c * k + i)];
      EXPECT_FLOAT_EQ(y[size_t(r * n + c)], want) << r << "," << c;
    }
}

// x: [m, k] and W: [n, k] in bf16 and widened; y from both paths.
struct bf16_case {
  std::vector<uint16_t> w16;
  std::vector<float> w32, x;
  bf16_case(int64_t m, int64_t n, int64_t k) : w16(size_t(n * k)), w32(w16.size()), x(size_t(m * k)) {
    for (size_t i = 0; i < w16.size(); ++i) {
      w16[i] = f32_to_bf16(float(int(i % 11) - 5) * 0.37f);
      w32[i] = bf16_to_f32(w16[i]);
    }
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13) * 0.25f - 1.0f;
  }
};

TEST(layers, linear_widens_bf16_weights_exactly) {
  kernels::thread_pool pool(2);
  const int64_t n = 150, k = 37, m = 6; // 150 rows: several panels per part (fixed order) or 48-row panels (OpenBLAS)
  bf16_case c(m, n, k);
  std::vector<float> y16(size_t(m * n)), y32(y16.size());
  linear(pool, c.x.data(), k, m, weight_view{c.w16.data(), dtype::bf16, 2, {n, k}}, y16.data(), n, false);
  linear(pool, c.x.data(), k, m, matrix(c.w32, n, k), y32.data(), n, false);
  EXPECT_EQ(y16, y32);
}

// linear through the pool: several parts per thread, each through the
// CPU's best fixed-order kernel (every kernel alone: linear_kernels_test).
TEST(layers, linear_sums_every_output_in_one_fixed_order) {
  if (fixed_order_isas().empty()) GTEST_SKIP() << "no AVX2 and FMA: linear goes through OpenBLAS, whose order depends on m";
  kernels::thread_pool pool(2);
  std::mt19937 rng(5);
  for (int64_t k : {17, 64}) {
    for (int64_t n : {17, 150}) {
      const random_case c(n, k, rng);
      for (int64_t m : {1, 2, 7, 8, 9, 40, 65}) {
        const std::vector<float> x = c.rows(m, k, rng), y0 = c.rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          const std::vector<float> want = fma_chain(x, c.w32, y0, m, n, k, accumulate);
          std::vector<float> y32 = y0, y16 = y0;
          linear(pool, x.data(), k, m, matrix(c.w32, n, k), y32.data(), n, accumulate);
          linear(pool, x.data(), k, m, weight_view{c.w16.data(), dtype::bf16, 2, {n, k}}, y16.data(), n, accumulate);
          const std::string what = shape_name(m, n, k, accumulate);
          ASSERT_EQ(std::memcmp(y32.data(), want.data(), want.size() * 4), 0) << "fp32 W, " << what;
          ASSERT_EQ(std::memcmp(y16.data(), want.data(), want.size() * 4), 0) << "bf16 W, " << what;
        }
      }
    }
  }
}

TEST(layers, swiglu_is_silu_gate_times_up) {
  kernels::thread_pool pool(1);
  const std::vector<float> g{0, 1, -2}, u{5, 2, 3};
  std::vector<float> out(3);
  swiglu(pool, g.data(), u.data(), out.data(), 1, 3);
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_FLOAT_EQ(out[1], 2.0f / (1.0f + std::exp(-1.0f)));
  EXPECT_FLOAT_EQ(out[2], 3.0f * -2.0f / (1.0f + std::exp(2.0f)));
}

TEST(layers, embedding_widens_bf16_rows) {
  kernels::thread_pool pool(1);
  const std::vector<uint16_t> table{0x3f80, 0x4000, 0xc040, 0x0000}; // [[1, 2], [-3, 0]]
  const weight_view v{table.data(), dtype::bf16, 2, {2, 2}};
  const std::vector<int32_t> ids{1, 0};
  std::vector<float> out(4);
  embedding(pool, v, ids, out.data());
  EXPECT_EQ(out, (std::vector<float>{-3, 0, 1, 2}));
}

} // namespace
} // namespace kvactor::model::layers
