// The CPU layers on hand-checked values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/forward/layers.hpp"
#include "model/forward/linear_kernels.hpp"
#include "model/forward/pair_kernels.hpp"
#include "tests/model/fma_chain.hpp"

namespace kvactor::model::layers {
namespace {

weight_view matrix(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return weight_view{v.data(), dtype::f32, 2, {rows, cols}, {}};
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

packed_matrix packed(const weight_view& w, dtype type) {
  return packed_matrix::pack(std::vector{w}, type);
}

TEST(layers, linear_is_x_times_w_transposed_and_accumulates) {
  kernels::thread_pool pool(2);
  // 40 output columns: three blocks, split over the pool.
  const int64_t n = 40, k = 3, m = 2;
  std::vector<float> w(size_t(n * k)), x{1, 2, 3, -1, 0, 1};
  for (int64_t i = 0; i < n * k; ++i) w[size_t(i)] = float(i % 7) - 3;
  std::vector<float> y(size_t(m * n), 1.0f);
  linear(pool, x.data(), k, m, packed(matrix(w, n, k), dtype::f32), y.data(), n, true);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float want = 1.0f;
      for (int64_t i = 0; i < k; ++i) want += x[size_t(r * k + i)] * w[size_t(c * k + i)];
      EXPECT_FLOAT_EQ(y[size_t(r * n + c)], want) << r << "," << c;
    }
}

// linear through the pool: several parts per thread, each through the
// CPU's best kernel (every kernel alone: linear_kernels_test); bf16 W gives
// the results of its widened values.
TEST(layers, linear_sums_every_output_in_one_fixed_order) {
  kernels::thread_pool pool(2);
  const bool fused = fuses(fixed_order_isas().front());
  std::mt19937 rng(5);
  for (int64_t k : {17, 64}) {
    for (int64_t n : {17, 150}) {
      const random_case c(n, k, rng);
      const packed_matrix p32 = packed(c.view32(n, k), dtype::f32),
                          p16 = packed(c.view16(n, k), dtype::bf16);
      for (int64_t m : {1, 2, 7, 8, 9, 40, 65}) {
        const std::vector<float> x = c.rows(m, k, rng), y0 = c.rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          const std::vector<float> want = fma_chain(x, c.w32, y0, m, n, k, accumulate, fused);
          std::vector<float> y32 = y0, y16 = y0;
          linear(pool, x.data(), k, m, p32, y32.data(), n, accumulate);
          linear(pool, x.data(), k, m, p16, y16.data(), n, accumulate);
          const std::string what = shape_name(m, n, k, accumulate);
          ASSERT_EQ(std::memcmp(y32.data(), want.data(), want.size() * 4), 0) << "fp32 W, " << what;
          ASSERT_EQ(std::memcmp(y16.data(), want.data(), want.size() * 4), 0) << "bf16 W, " << what;
        }
      }
    }
  }
}

// bf16 activations: linear rounds x to bf16 (nearest even) and runs the
// CPU's best pair kernel over the pool, whose parts change no bit.
TEST(layers, linear_on_bf16_pairs_rounds_x_and_runs_the_pair_kernel) {
  kernels::thread_pool pool(2);
  std::mt19937 rng(9);
  const pair_isa isa = pair_product_isas().front();
  for (int64_t k : {17, 64}) {
    for (int64_t n : {17, 150}) {
      const random_case c(n, k, rng);
      const packed_matrix w =
        packed_matrix::pack(std::vector{c.view16(n, k)}, dtype::bf16, packed_matrix::layout::pairs);
      for (int64_t m : {1, 2, 7, 17, 40, 65}) {
        const int64_t ldx = k + 3; // x rows wider than k
        const std::vector<float> x = c.rows(m, ldx, rng), y0 = c.rows(m, n, rng);
        std::vector<uint16_t> rounded(size_t(pair_rows(m) * w.stored_cols()));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j)
            rounded[size_t(i * w.stored_cols() + j)] = f32_to_bf16(x[size_t(i * ldx + j)]);
        for (bool accumulate : {false, true}) {
          std::vector<float> want = y0, got = y0;
          pair_product(isa, rounded.data(), w.stored_cols(), m, w, 0, w.num_blocks(), want.data(),
                       n, accumulate);
          linear(pool, x.data(), ldx, m, w, got.data(), n, accumulate);
          ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
              << isa_name(isa) << ", " << shape_name(m, n, k, accumulate);
        }
      }
    }
  }
  EXPECT_EQ(products_name(packed_matrix::layout::pairs),
            std::string("bf16 pairs ") + isa_name(isa));
}

TEST(layers, swiglu_is_silu_gate_times_up) {
  kernels::thread_pool pool(1);
  const std::vector<float> g{0, 1, -2}, u{5, 2, 3};
  std::vector<float> out(3);
  swiglu(pool, g.data(), u.data(), 3, out.data(), 3, 1, 3);
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_FLOAT_EQ(out[1], 2.0f / (1.0f + std::exp(-1.0f)));
  EXPECT_FLOAT_EQ(out[2], 3.0f * -2.0f / (1.0f + std::exp(2.0f)));
}

// Rows of gate | up side by side (the forward pass's fused product), in place.
TEST(layers, swiglu_reads_and_writes_strided_rows) {
  kernels::thread_pool pool(1);
  std::vector<float> gu{1, -2, 5, 7, /* row 2 */ 3, 0, -1, 2};
  swiglu(pool, gu.data(), gu.data() + 2, 4, gu.data(), 4, 2, 2);
  auto silu = [](float x) { return x / (1.0f + std::exp(-x)); };
  EXPECT_FLOAT_EQ(gu[0], silu(1) * 5);
  EXPECT_FLOAT_EQ(gu[1], silu(-2) * 7);
  EXPECT_FLOAT_EQ(gu[4], silu(3) * -1);
  EXPECT_FLOAT_EQ(gu[5], 0.0f);
  EXPECT_EQ(gu[2], 5.0f); // up untouched
  EXPECT_EQ(gu[7], 2.0f);
}

TEST(layers, embedding_widens_bf16_rows) {
  kernels::thread_pool pool(1);
  const std::vector<uint16_t> table{0x3f80, 0x4000, 0xc040, 0x0000}; // [[1, 2], [-3, 0]]
  const weight_view v{table.data(), dtype::bf16, 2, {2, 2}, {}};
  const std::vector<int32_t> ids{1, 0};
  std::vector<float> out(4);
  embedding(pool, v, ids, out.data());
  EXPECT_EQ(out, (std::vector<float>{-3, 0, 1, 2}));
}

// Round to nearest even at bf16's 8 significant bits, NaN kept, on strided
// rows (q | k | v rows of the bf16 cache path); elements between rows untouched.
TEST(layers, to_bf16_rounds_each_element_to_nearest_even) {
  kernels::thread_pool pool(2);
  const float half_ulp = std::ldexp(1.0f, -8); // of 1.0 in bf16 (ulp 2^-7)
  const std::vector<float> x{1.0f,
                             1.0f + half_ulp,
                             1.0f + 3 * half_ulp,
                             1.0f + half_ulp + std::ldexp(1.0f, -20),
                             /* row 2 */ -2.5f,
                             0.0f,
                             std::nanf(""),
                             3.0e38f};
  std::vector<uint16_t> out(10, 0xabcd);
  to_bf16(pool, x.data(), 4, out.data(), 5, 2, 4);
  EXPECT_EQ(out[0], 0x3f80); // exact
  EXPECT_EQ(out[1], 0x3f80); // a tie, down to the even 1.0
  EXPECT_EQ(out[2], 0x3f82); // a tie, up to the even 1 + 2^-6
  EXPECT_EQ(out[3], 0x3f81); // past the tie: up
  EXPECT_EQ(out[4], 0xabcd); // between the rows
  EXPECT_EQ(out[5], 0xc020);
  EXPECT_EQ(out[6], 0x0000);
  EXPECT_TRUE(std::isnan(bf16_to_f32(out[7])));
  EXPECT_EQ(out[8], f32_to_bf16(3.0e38f));
  EXPECT_EQ(out[9], 0xabcd);
}

TEST(layers, from_bf16_widens_exactly_on_strided_rows) {
  kernels::thread_pool pool(2);
  const std::vector<uint16_t> x{0x3f80, 0xc020, 0xffff, /* row 2 */ 0x3f81, 0x0001, 0xffff};
  std::vector<float> out(6, 7.0f);
  from_bf16(pool, x.data(), 3, out.data(), 3, 2, 2);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.5f);
  EXPECT_EQ(out[2], 7.0f);
  EXPECT_EQ(out[3], 1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(out[4], std::ldexp(1.0f, -133)); // the smallest bf16 subnormal
  EXPECT_EQ(out[5], 7.0f);
}

// Enough rows to split over the pool: every element as the scalar rounding
// gives it, and back again to the rounded values.
TEST(layers, bf16_conversions_split_over_the_pool_change_no_element) {
  kernels::thread_pool pool(2);
  const int64_t rows = 64, n = 1024;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(size_t(rows * n)), back(x.size());
  for (float& v : x) v = normal(rng);
  std::vector<uint16_t> h(x.size());
  to_bf16(pool, x.data(), n, h.data(), n, rows, n);
  from_bf16(pool, h.data(), n, back.data(), n, rows, n);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], f32_to_bf16(x[i])) << i;
    ASSERT_EQ(back[i], bf16_to_f32(f32_to_bf16(x[i]))) << i;
  }
}

} // namespace
} // namespace kvactor::model::layers
