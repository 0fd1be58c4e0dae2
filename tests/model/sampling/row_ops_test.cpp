// Each instruction set's row passes against plain loops in double, on rows
// with a tail shorter than a vector and with NaN and -inf in them.

#include "model/sampling/row_ops.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model::sampling {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

std::vector<float> row(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> x(n);
  for (float& v : x)
    v = d(gen);
  x[n / 3] = std::numeric_limits<float>::quiet_NaN();
  x[n / 2] = -inf;
  return x;
}

class row_ops_test : public ::testing::TestWithParam<row_isa> {
protected:
  const row_ops& ops() const { return row_ops_for(GetParam()); }
};

TEST_P(row_ops_test, max_skips_nan) {
  for (size_t n : {1u, 15u, 17u, 1000u, 3001u}) {
    auto x = row(std::max<size_t>(n, 3), 1);
    x.resize(n);
    float expected = -inf;
    for (float v : x)
      if (v > expected)
        expected = v;
    EXPECT_EQ(ops().max(x.data(), int64_t(n)), expected) << n;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> nans = {nan, nan, nan};
  EXPECT_EQ(ops().max(nans.data(), 3), -inf);
}

TEST_P(row_ops_test, weights_are_exp_within_two_ulp_and_blocks_sum_them) {
  const auto x = row(2 * row_block + 37, 2);
  const auto n = int64_t(x.size());
  const float m = ops().max(x.data(), n);
  const float scale = 1.25f;
  std::vector<float> w(x.size()), sums(size_t(num_row_blocks(n)));
  const float total = ops().weights(x.data(), n, m, scale, w.data(), sums.data());
  double expected_total = 0;
  for (int64_t i = 0; i < n; ++i) {
    // NOTE: the argument is rounded to float as the passes compute it; the
    // exp of that argument is what must be within 2 ulp.
    const float arg = (x[size_t(i)] - m) * scale;
    const double e = std::isnan(arg) ? 0 : std::exp(double(arg));
    const double got = w[size_t(i)];
    if (e < 1e-37) {
      EXPECT_LE(got, 1e-37) << i;
    } else {
      EXPECT_NEAR(got, e, 2.5e-7 * e) << i;
    }
    expected_total += e;
  }
  EXPECT_NEAR(total, expected_total, 1e-5 * expected_total);
  double block_total = 0;
  for (float s : sums)
    block_total += s;
  EXPECT_NEAR(block_total, total, 1e-6 * total);
  EXPECT_NEAR(
    ops().sum_exp(x.data(), n, m),
    [&] {
      double s = 0;
      for (float v : x)
        s += std::isnan(v) ? 0 : std::exp(double(v) - m);
      return s;
    }(),
    1e-5 * expected_total);
}

TEST_P(row_ops_test, at_least_and_kept_sums_measure_exactly_what_they_say) {
  auto w = row(3 * row_block + 5, 3);
  for (float& v : w)
    v = std::isnan(v) || std::isinf(v) ? 0.0f : std::abs(v) / 10;
  w[100] = w[101] = w[2000] = 0.25f; // ties at the cut
  const auto n = int64_t(w.size());
  const row_measure m = ops().at_least(w.data(), n, 0.25f);
  row_measure expected;
  for (float v : w)
    if (v >= 0.25f) {
      expected.mass += v;
      ++expected.count;
    }
  EXPECT_EQ(m.count, expected.count);
  EXPECT_NEAR(m.mass, expected.mass, 1e-5 * expected.mass);

  const row_cut cut{0.25f, 101}; // 100 and 101 in, 2000 out
  std::vector<float> sums(size_t(num_row_blocks(n)));
  const float kept = ops().kept_sums(w.data(), n, cut, sums.data());
  double exact = 0;
  for (int64_t i = 0; i < n; ++i)
    if (w[size_t(i)] > 0.25f || (w[size_t(i)] == 0.25f && i <= 101))
      exact += w[size_t(i)];
  EXPECT_NEAR(kept, exact, 1e-5 * exact);
  EXPECT_NEAR(exact, expected.mass - 0.25, 1e-5 * exact);
}

TEST_P(row_ops_test, next_finds_the_first_index_in_range) {
  const auto x = row(500, 4);
  const auto n = int64_t(x.size());
  for (float at : {-1.0f, 2.0f, 5.0f, 100.0f})
    for (int64_t from : {0, 7, 31, 499}) {
      int64_t expected = n;
      for (int64_t i = from; i < n; ++i)
        if (x[size_t(i)] >= at) {
          expected = i;
          break;
        }
      EXPECT_EQ(ops().next_at_least(x.data(), from, n, at), expected) << at << " " << from;
      int64_t in = n;
      for (int64_t i = from; i < n; ++i)
        if (x[size_t(i)] >= at && x[size_t(i)] < at + 1.5f) {
          in = i;
          break;
        }
      EXPECT_EQ(ops().next_in(x.data(), from, n, at, at + 1.5f), in) << at << " " << from;
    }
  EXPECT_EQ(ops().next_at_least(x.data(), 0, n, -inf), 0);
}

INSTANTIATE_TEST_SUITE_P(isas, row_ops_test,
                         ::testing::ValuesIn(row_isas().begin(), row_isas().end()),
                         [](const ::testing::TestParamInfo<row_isa>& p) {
                           return std::string(isa_name(p.param));
                         });

} // namespace
} // namespace kvactor::model::sampling
