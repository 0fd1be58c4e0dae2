// Every fixed-order kernel this CPU runs, alone, against the fma chain it
// promises, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "model/forward/linear_kernels.hpp"
#include "tests/model/fma_chain.hpp"

namespace kvactor::model::layers {
namespace {

TEST(linear_kernels, the_cpu_gets_every_kernel_it_supports_best_first) {
  const std::span<const product_isa> isas = fixed_order_isas();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  EXPECT_EQ(std::count(isas.begin(), isas.end(), product_isa::avx2), avx2 ? 1 : 0);
  EXPECT_EQ(std::count(isas.begin(), isas.end(), product_isa::avx512), avx512 ? 1 : 0);
  if (avx512) {
    EXPECT_EQ(isas.front(), product_isa::avx512);
  }
}

class linear_kernels_test : public ::testing::TestWithParam<product_isa> {};

TEST_P(linear_kernels_test, every_output_is_one_fma_chain_whatever_the_shape) {
  const product_isa isa = GetParam();
  const std::span<const product_isa> isas = fixed_order_isas();
  if (std::find(isas.begin(), isas.end(), isa) == isas.end())
    GTEST_SKIP() << "this CPU does not run the " << isa_name(isa) << " kernel";
  std::mt19937 rng(5);
  // k: below, at and past one vector of 8 and 16, with tails; n: a single
  // output, masked tails, several blocks and panels; m: every count of rows
  // up to 40 (both tilings, every tail of 6-row tiles), then the sizes of
  // decode and prefill steps.
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 40; ++m) ms.push_back(m);
  for (int64_t m : {63, 64, 65, 100}) ms.push_back(m);
  for (int64_t k : {1, 7, 8, 9, 15, 16, 17, 37, 64, 100}) {
    std::vector<float> scratch(size_t(fixed_order_panel_rows * k));
    for (int64_t n : {1, 7, 17, 48, 150}) {
      const random_case c(n, k, rng);
      for (int64_t m : ms) {
        const std::vector<float> x = c.rows(m, k, rng), y0 = c.rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          const std::vector<float> want = fma_chain(x, c.w32, y0, m, n, k, accumulate);
          std::vector<float> y32 = y0, y16 = y0;
          fixed_order_product(isa, x.data(), k, m, c.w32.data(), n, k, y32.data(), n, accumulate, scratch.data());
          fixed_order_product(isa, x.data(), k, m, c.w16.data(), n, k, y16.data(), n, accumulate, scratch.data());
          const std::string what = shape_name(m, n, k, accumulate);
          ASSERT_EQ(std::memcmp(y32.data(), want.data(), want.size() * 4), 0) << "fp32 W, " << what;
          ASSERT_EQ(std::memcmp(y16.data(), want.data(), want.size() * 4), 0) << "bf16 W, " << what;
        }
      }
    }
  }
}

// Rows of x and y apart by more than their width (the forward pass's views
// into wider buffers): nothing outside [m, n] of y is written.
TEST_P(linear_kernels_test, strided_rows_leave_the_gaps_alone) {
  const product_isa isa = GetParam();
  const std::span<const product_isa> isas = fixed_order_isas();
  if (std::find(isas.begin(), isas.end(), isa) == isas.end())
    GTEST_SKIP() << "this CPU does not run the " << isa_name(isa) << " kernel";
  std::mt19937 rng(7);
  const int64_t n = 21, k = 19, ldx = 27, ldy = 30;
  const random_case c(n, k, rng);
  std::vector<float> scratch(size_t(fixed_order_panel_rows * k));
  for (int64_t m : {3, 13}) {
    const std::vector<float> wide_x = c.rows(m, ldx, rng);
    std::vector<float> x(size_t(m * k));
    for (int64_t i = 0; i < m; ++i) std::copy_n(wide_x.begin() + i * ldx, k, x.begin() + i * k);
    std::vector<float> y(size_t(m * ldy), -7.0f);
    fixed_order_product(isa, wide_x.data(), ldx, m, c.w32.data(), n, k, y.data(), ldy, false, scratch.data());
    const std::vector<float> want = fma_chain(x, c.w32, std::vector<float>(size_t(m * n)), m, n, k, false);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ldy; ++j) {
        const float got = y[size_t(i * ldy + j)];
        if (j < n) ASSERT_EQ(got, want[size_t(i * n + j)]) << "m " << m << " row " << i << " col " << j;
        else ASSERT_EQ(got, -7.0f) << "m " << m << " row " << i << " gap " << j;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(isas, linear_kernels_test, ::testing::Values(product_isa::avx2, product_isa::avx512),
                         [](const ::testing::TestParamInfo<product_isa>& p) { return std::string(isa_name(p.param)); });

} // namespace
} // namespace kvactor::model::layers
