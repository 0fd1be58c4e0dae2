// Every bf16 pair kernel this CPU runs, alone: within fp32 rounding of the
// exact sums, the portable one bit for bit its documented chain, and each
// batch-invariant bit for bit (a row's outputs alone equal its outputs in
// any batch and any split of W's blocks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "model/forward/pair_kernels.hpp"
#include "tests/model/fma_chain.hpp"
#include "tests/model/pair_chain.hpp"
#include "tests/model/tile_data_granted.hpp"

namespace kvactor::model::layers {
namespace {

TEST(pair_kernels, the_cpu_gets_every_kernel_it_supports_best_first) {
  const std::span<const pair_isa> isas = pair_product_isas();
  const bool amx = __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16");
  const bool avx512_bf16 =
    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  std::vector<pair_isa> want;
  // After the lookup, the process holds the tile data permission iff it asked for it and got it.
  if (amx && os_granted_tile_data()) want.push_back(pair_isa::amx);
  if (avx512_bf16) want.push_back(pair_isa::avx512_bf16);
  want.push_back(pair_isa::generic);
  EXPECT_EQ(std::vector<pair_isa>(isas.begin(), isas.end()), want);
  if (amx) {
    EXPECT_TRUE(os_granted_tile_data()) << "an AMX CPU whose OS refused tile data";
  }
}

TEST(pair_kernels, pair_rows_round_up_to_a_tile) {
  EXPECT_EQ(pair_rows(1), 16);
  EXPECT_EQ(pair_rows(16), 16);
  EXPECT_EQ(pair_rows(17), 32);
  EXPECT_EQ(pair_rows(64), 64);
}

class pair_kernels_test : public ::testing::TestWithParam<pair_isa> {
protected:
  void SetUp() override {
    const std::span<const pair_isa> isas = pair_product_isas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << "this CPU does not run the " << isa_name(GetParam()) << " kernel";
  }
};

packed_matrix pairs(const random_case& c, int64_t n, int64_t k) {
  return packed_matrix::pack(std::vector{c.view16(n, k)}, dtype::bf16,
                             packed_matrix::layout::pairs);
}

// m: every count of rows to 40 (each tile shape and its tails), then the
// sizes of decode and prefill steps; k: one pair, partial AMX steps and
// several; n: a single output, partial and several blocks.
const std::vector<int64_t>& row_counts() {
  static const std::vector<int64_t> ms = [] {
    std::vector<int64_t> v;
    for (int64_t m = 1; m <= 40; ++m) v.push_back(m);
    for (int64_t m : {63, 64, 65, 100}) v.push_back(m);
    return v;
  }();
  return ms;
}

TEST_P(pair_kernels_test, every_output_is_the_exact_sum_within_fp32_rounding) {
  const pair_isa isa = GetParam();
  std::mt19937 rng(11);
  for (int64_t k : {2, 7, 32, 45, 130}) {
    for (int64_t n : {1, 15, 17, 48, 150}) {
      const random_case c(n, k, rng);
      const packed_matrix w = pairs(c, n, k);
      for (int64_t m : row_counts()) {
        const bf16_rows x(m, k, w.stored_cols(), rng);
        const std::vector<float> y0 = random_case::rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          std::vector<float> y = y0;
          pair_product(isa, x.bits.data(), x.cols, m, w, 0, w.num_blocks(), y.data(), n,
                       accumulate);
          const exact_sums want(x.values, c.w32, y0, m, n, k, accumulate);
          for (size_t e = 0; e < y.size(); ++e)
            ASSERT_NEAR(y[e], want.sum[e], want.bound[e])
                << shape_name(m, n, k, accumulate) << " output " << e << " of " << y.size();
        }
      }
    }
  }
}

TEST_P(pair_kernels_test, a_row_gets_the_same_bits_in_any_batch_and_split) {
  const pair_isa isa = GetParam();
  std::mt19937 rng(13);
  const int64_t n = 150, k = 70; // 10 blocks, 3 AMX steps (the last one padded)
  const random_case c(n, k, rng);
  const packed_matrix w = pairs(c, n, k);
  for (int64_t m : row_counts()) {
    const bf16_rows x(m, k, w.stored_cols(), rng);
    const std::vector<float> y0 = random_case::rows(m, n, rng);
    for (bool accumulate : {false, true}) {
      std::vector<float> batch = y0;
      pair_product(isa, x.bits.data(), x.cols, m, w, 0, w.num_blocks(), batch.data(), n,
                   accumulate);
      for (int64_t i = 0; i < m; ++i) {
        // the row alone (its own 16-row tile), its blocks in three parts
        std::vector<uint16_t> row(size_t(pair_rows(1) * x.cols));
        std::copy_n(x.bits.begin() + i * x.cols, x.cols, row.begin());
        std::vector<float> alone(y0.begin() + i * n, y0.begin() + (i + 1) * n);
        for (auto [first, count] : {std::pair<int64_t, int64_t>{0, 3}, {3, 1}, {4, 6}})
          pair_product(isa, row.data(), x.cols, 1, w, first, count, alone.data(), n, accumulate);
        ASSERT_EQ(std::memcmp(alone.data(), batch.data() + i * n, size_t(n) * 4), 0)
            << "row " << i << " of " << shape_name(m, n, k, accumulate);
      }
    }
  }
}

// Rows of x and y apart by more than their width, and a range of blocks:
// nothing else of y is written.
TEST_P(pair_kernels_test, writes_only_the_outputs_of_its_blocks) {
  const pair_isa isa = GetParam();
  std::mt19937 rng(7);
  const int64_t n = 57, k = 19, ldy = 70;
  const random_case c(n, k, rng);
  const packed_matrix w = pairs(c, n, k);
  ASSERT_EQ(w.num_blocks(), 4);
  for (int64_t m : {1, 2, 13, 17, 40}) {
    const bf16_rows x(m, k, 3 * w.stored_cols(), rng); // ldx: three times W's stored columns
    std::vector<float> all(size_t(m * n));
    pair_product(isa, x.bits.data(), x.cols, m, w, 0, w.num_blocks(), all.data(), n, false);
    // blocks 1 and 2: columns [16, 48); then 3: the partial block [48, 57)
    for (auto [first, count] : {std::pair<int64_t, int64_t>{1, 2}, {3, 1}}) {
      std::vector<float> y(size_t(m * ldy), -7.0f);
      pair_product(isa, x.bits.data(), x.cols, m, w, first, count, y.data(), ldy, false);
      const int64_t begin = 16 * first, end = std::min(n, 16 * (first + count));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldy; ++j) {
          const float got = y[size_t(i * ldy + j)];
          const std::string where =
            "m " + std::to_string(m) + " row " + std::to_string(i) + " col " + std::to_string(j);
          if (j >= begin && j < end) ASSERT_EQ(got, all[size_t(i * n + j)]) << where;
          else
            ASSERT_EQ(got, -7.0f) << where << " (outside blocks " << first << " + " << count << ")";
        }
    }
  }
}

TEST(pair_kernels, the_portable_kernel_is_its_documented_chain_bit_for_bit) {
  std::mt19937 rng(17);
  for (int64_t k : {2, 33, 100}) {
    for (int64_t n : {5, 40}) {
      const random_case c(n, k, rng);
      const packed_matrix w = pairs(c, n, k);
      for (int64_t m : {1, 3, 18}) {
        const bf16_rows x(m, k, w.stored_cols(), rng);
        const std::vector<float> y0 = random_case::rows(m, n, rng);
        for (bool accumulate : {false, true}) {
          std::vector<float> y = y0;
          pair_product(pair_isa::generic, x.bits.data(), x.cols, m, w, 0, w.num_blocks(), y.data(),
                       n, accumulate);
          const std::vector<float> want = odd_even_chain(x.values, c.w32, y0, m, n, k, accumulate);
          for (size_t e = 0; e < y.size(); ++e)
            ASSERT_EQ(y[e], want[e]) << e << " " << shape_name(m, n, k, accumulate);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(isas, pair_kernels_test,
                         ::testing::Values(pair_isa::generic, pair_isa::avx512_bf16, pair_isa::amx),
                         [](const ::testing::TestParamInfo<pair_isa>& p) {
                           return std::string(isa_name(p.param));
                         });

} // namespace
} // namespace kvactor::model::layers
