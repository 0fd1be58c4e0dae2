// Every fixed-order kernel this CPU runs, alone, against the chain it
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
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  const std::vector<product_isa> want = [&] {
    std::vector<product_isa> v;
    if (avx512) v.push_back(product_isa::avx512);
    if (avx2) v.push_back(product_isa::avx2);
    v.push_back(product_isa::generic);
    return v;
  }();
  EXPECT_EQ(std::vector<product_isa>(isas.begin(), isas.end()), want);
}

class linear_kernels_test : public ::testing::TestWithParam<product_isa> {
protected:
  void SetUp() override {
    const std::span<const product_isa> isas = fixed_order_isas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << "this CPU does not run the " << isa_name(GetParam()) << " kernel";
  }
};

TEST_P(linear_kernels_test, every_output_is_one_chain_whatever_the_shape) {
  const product_isa isa = GetParam();
  std::mt19937 rng(5);
  // k: one column and more; n: a single output, partial and several blocks
  // (every tile's count of blocks and its remainders); m: every count of
  // rows up to 40 (every tile and its tail rows), then the sizes of decode
  // and prefill steps.
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= 40; ++m) ms.push_back(m);
  for (int64_t m : {63, 64, 65, 100}) ms.push_back(m);
  for (int64_t k : {1, 7, 16, 37, 100}) {
    for (int64_t n : {1, 15, 17, 48, 150}) {
      const random_case c(n, k, rng);
      const packed_matrix p32 = packed_matrix::pack(std::vector{c.view32(n, k)}, dtype::f32);
      const packed_matrix p16 = packed_matrix::pack(std::vector{c.view16(n, k)}, dtype::bf16);
      for (int64_t m : ms) {
        const std::vector<float> x = c.rows(m, k, rng), y0 = c.rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          const std::vector<float> want = fma_chain(x, c.w32, y0, m, n, k, accumulate, fuses(isa));
          std::vector<float> y32 = y0, y16 = y0;
          fixed_order_product(isa, x.data(), k, m, p32, 0, p32.num_blocks(), y32.data(), n,
                              accumulate);
          fixed_order_product(isa, x.data(), k, m, p16, 0, p16.num_blocks(), y16.data(), n,
                              accumulate);
          const std::string what = shape_name(m, n, k, accumulate);
          ASSERT_EQ(std::memcmp(y32.data(), want.data(), want.size() * 4), 0) << "fp32 W, " << what;
          ASSERT_EQ(std::memcmp(y16.data(), want.data(), want.size() * 4), 0) << "bf16 W, " << what;
        }
      }
    }
  }
}

// Rows of x and y apart by more than their width (the forward pass's views
// into wider buffers), and a range of blocks: nothing else of y is written.
TEST_P(linear_kernels_test, writes_only_the_outputs_of_its_blocks) {
  const product_isa isa = GetParam();
  std::mt19937 rng(7);
  const int64_t n = 57, k = 19, ldx = 27, ldy = 70;
  const random_case c(n, k, rng);
  const packed_matrix p = packed_matrix::pack(std::vector{c.view32(n, k)}, dtype::f32);
  ASSERT_EQ(p.num_blocks(), 4);
  for (int64_t m : {1, 2, 13}) {
    const std::vector<float> wide_x = c.rows(m, ldx, rng);
    std::vector<float> x(size_t(m * k));
    for (int64_t i = 0; i < m; ++i) std::copy_n(wide_x.begin() + i * ldx, k, x.begin() + i * k);
    const std::vector<float> want =
      fma_chain(x, c.w32, std::vector<float>(size_t(m * n)), m, n, k, false, fuses(isa));
    // blocks 1 and 2: columns [16, 48); then 3: the partial block [48, 57)
    for (auto [first, count] : {std::pair<int64_t, int64_t>{1, 2}, {3, 1}}) {
      std::vector<float> y(size_t(m * ldy), -7.0f);
      fixed_order_product(isa, wide_x.data(), ldx, m, p, first, count, y.data(), ldy, false);
      const int64_t begin = 16 * first, end = std::min(n, 16 * (first + count));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldy; ++j) {
          const float got = y[size_t(i * ldy + j)];
          const std::string where =
            "m " + std::to_string(m) + " row " + std::to_string(i) + " col " + std::to_string(j);
          if (j >= begin && j < end) ASSERT_EQ(got, want[size_t(i * n + j)]) << where;
          else
            ASSERT_EQ(got, -7.0f) << where << " (outside blocks " << first << " + " << count << ")";
        }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(isas, linear_kernels_test,
                         ::testing::Values(product_isa::generic, product_isa::avx2,
                                           product_isa::avx512),
                         [](const ::testing::TestParamInfo<product_isa>& p) {
                           return std::string(isa_name(p.param));
                         });

} // namespace
} // namespace kvactor::model::layers
