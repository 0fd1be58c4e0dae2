// find_cut against a full sort: the cut it returns is the smallest top set
// reaching the target (by count exactly; by mass up to the summation's
// rounding), on flat and peaked rows of 128k weights, with ties.

#include "model/sampling/cut_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model::sampling {
namespace {

std::vector<float> weights(size_t n, double sigma, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> d(0.0, sigma);
  std::vector<double> l(n);
  for (double& x : l)
    x = d(gen);
  const double m = *std::max_element(l.begin(), l.end());
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i)
    w[i] = float(std::exp(l[i] - m));
  return w;
}

bool above(const std::vector<float>& w, size_t i, row_cut c) {
  return w[i] > c.w || (w[i] == c.w && int64_t(i) <= c.id);
}

// The elements at or above the cut, most likely first.
std::vector<size_t> kept(const std::vector<float>& w, row_cut c) {
  std::vector<size_t> k;
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i] > 0 && above(w, i, c))
      k.push_back(i);
  std::sort(k.begin(), k.end(),
            [&](size_t a, size_t b) { return w[a] != w[b] ? w[a] > w[b] : a < b; });
  return k;
}

class cut_search_test : public ::testing::TestWithParam<row_isa> {};

TEST_P(cut_search_test, top_k_keeps_exactly_k) {
  const row_ops& ops = row_ops_for(GetParam());
  cut_scratch scratch;
  for (double sigma : {0.5, 4.0}) {
    auto w = weights(128256, sigma, 1);
    std::fill(w.begin() + 5000, w.begin() + 5100, w[7]); // a run of ties
    const auto n = int64_t(w.size());
    const row_measure all = ops.at_least(w.data(), n, std::numeric_limits<float>::denorm_min());
    for (int k : {1, 7, 50, 4000, 100000}) {
      const row_cut c = find_cut(ops, w.data(), n, {0.0f, -1}, all, measure_by::count, k, scratch);
      const auto k_set = kept(w, c);
      ASSERT_EQ(k_set.size(), size_t(k)) << sigma << " " << k;
      // Nothing left out beats the last kept.
      size_t better_outside = 0;
      for (size_t i = 0; i < w.size(); ++i)
        if (!above(w, i, c) && (w[i] > w[k_set.back()]))
          ++better_outside;
      EXPECT_EQ(better_outside, 0u);
    }
  }
}

TEST_P(cut_search_test, top_p_keeps_the_smallest_set_reaching_the_mass) {
  const row_ops& ops = row_ops_for(GetParam());
  cut_scratch scratch;
  for (double sigma : {0.3, 1.0, 8.0})
    for (double p : {0.1, 0.5, 0.95}) {
      const auto w = weights(128256, sigma, 2);
      const auto n = int64_t(w.size());
      const row_measure all = ops.at_least(w.data(), n, std::numeric_limits<float>::denorm_min());
      const double target = p * all.mass;
      const row_cut c =
        find_cut(ops, w.data(), n, {0.0f, -1}, all, measure_by::mass, target, scratch);
      const auto set = kept(w, c);
      double mass = 0;
      for (size_t i : set)
        mass += w[i];
      SCOPED_TRACE("sigma " + std::to_string(sigma) + " p " + std::to_string(p));
      EXPECT_GE(mass, target * (1 - 1e-6));
      EXPECT_LT(mass - w[set.back()], target * (1 + 1e-6));
    }
}

TEST_P(cut_search_test, a_floor_is_respected_and_returned_when_everything_is_needed) {
  const row_ops& ops = row_ops_for(GetParam());
  cut_scratch scratch;
  const auto w = weights(20000, 2.0, 3);
  const auto n = int64_t(w.size());
  const row_cut floor{0.05f, std::numeric_limits<int32_t>::max()};
  const row_measure above_floor = ops.at_least(w.data(), n, 0.05f);
  EXPECT_EQ(find_cut(ops, w.data(), n, floor, above_floor, measure_by::count,
                     double(above_floor.count), scratch)
              .w,
            floor.w);
  const row_cut c = find_cut(ops, w.data(), n, floor, above_floor, measure_by::mass,
                             0.5 * above_floor.mass, scratch);
  EXPECT_GE(c.w, 0.05f);
}

INSTANTIATE_TEST_SUITE_P(isas, cut_search_test,
                         ::testing::ValuesIn(row_isas().begin(), row_isas().end()),
                         [](const ::testing::TestParamInfo<row_isa>& p) {
                           return std::string(isa_name(p.param));
                         });

} // namespace
} // namespace kvactor::model::sampling
