// What the stress tool's and the benchmark's loads share (tools/load/).

#include "tools/load/arrivals.hpp"
#include "tools/load/draws.hpp"
#include "tools/load/request_ids.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kvactor::tools {
namespace {

TEST(request_ids, an_id_reads_back_to_its_index) {
  for (int64_t i : {0, 7, 10, 1999})
    EXPECT_EQ(index_of(id_of(i), 2000), i) << id_of(i);
  EXPECT_EQ(id_of(17), "r17");
}

TEST(request_ids, other_ids_are_none_of_ours) {
  for (std::string_view id : {"", "r", "x1", "r1a", "r-1", "r01", "r2000", "r99999999999999999999"})
    EXPECT_EQ(index_of(id, 2000), -1) << id;
}

TEST(arrival_clock, rate_zero_sends_everything_at_once_without_drawing) {
  std::mt19937_64 rng(3), untouched(3);
  arrival_clock at_once(0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(at_once.next(rng), 0.0);
  EXPECT_EQ(rng(), untouched()); // the workload's other draws stay where they were
}

TEST(arrival_clock, a_poisson_process_of_the_rate) {
  std::mt19937_64 rng(5);
  arrival_clock poisson(200);
  double last = 0;
  constexpr int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double t = poisson.next(rng);
    ASSERT_GE(t, last);
    last = t;
  }
  // n gaps of mean 1/200 s: within 3% of n/200 s (the standard error is 0.7%).
  EXPECT_NEAR(last, n / 200.0, 0.03 * n / 200.0);
}

TEST(draws, tokens_and_numbers_stay_in_their_ranges) {
  std::mt19937_64 rng(9);
  const auto tokens = random_tokens(rng, 5000, 32, 40);
  ASSERT_EQ(tokens.size(), 5000u);
  EXPECT_EQ(*std::min_element(tokens.begin(), tokens.end()), 32);
  EXPECT_EQ(*std::max_element(tokens.begin(), tokens.end()), 39);
  for (int i = 0; i < 1000; ++i) {
    const int32_t x = uniform(rng, -2, 2);
    ASSERT_TRUE(x >= -2 && x <= 2) << x;
  }
}

TEST(seconds, converts_fractions_of_a_second) {
  EXPECT_EQ(seconds(1.5), std::chrono::milliseconds(1500));
  EXPECT_EQ(seconds(0), std::chrono::steady_clock::duration::zero());
}

} // namespace
} // namespace kvactor::tools
