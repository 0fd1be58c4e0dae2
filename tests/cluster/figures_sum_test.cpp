#include "cluster/figures_sum.hpp"

#include <gtest/gtest.h>

namespace kvactor::cluster {
namespace {

runtime_figures worker(int32_t total, int32_t used, double util, int64_t queries, int64_t hits) {
  runtime_figures f;
  f.device_blocks_total = total;
  f.device_blocks_used = used;
  f.device_blocks_free = total - used;
  f.kv_utilisation = util;
  f.prefix_queries = queries;
  f.prefix_hits = hits;
  f.requests_finished = 3;
  f.preemptions = 4;
  f.preemptions_by_swap = 2;
  f.swap_outs_refused = 1;
  f.time_to_first_token = {{0.1, 1.0}, {1, 2, 0}, 0.5, 3};
  return f;
}

TEST(figures_sum, adds_counts_and_recomputes_rates) {
  auto a = worker(100, 50, 0.5, 10, 5);
  auto b = worker(300, 0, 0.0, 30, 0);
  b.broken_invariants = {"block 3 is free twice"};
  auto s = sum_figures({{"h:1", a}, {"h:2", b}});
  EXPECT_EQ(s.device_blocks_total, 400);
  EXPECT_EQ(s.device_blocks_free, 350);
  EXPECT_EQ(s.requests_finished, 6);
  EXPECT_EQ(s.preemptions, 8);
  EXPECT_EQ(s.preemptions_by_swap, 4);
  EXPECT_EQ(s.swap_outs_refused, 2);
  EXPECT_DOUBLE_EQ(s.kv_utilisation, 50.0 / 400.0); // weighted by pool size
  EXPECT_DOUBLE_EQ(s.prefix_hit_rate, 5.0 / 40.0);
  EXPECT_EQ(s.time_to_first_token.counts, (std::vector<int64_t>{2, 4, 0}));
  EXPECT_EQ(s.time_to_first_token.count, 6);
  ASSERT_EQ(s.broken_invariants.size(), 1u);
  EXPECT_EQ(s.broken_invariants[0], "h:2: block 3 is free twice");
}

TEST(figures_sum, leaves_out_a_histogram_of_other_bounds) {
  auto a = worker(1, 0, 0, 0, 0);
  auto b = worker(1, 0, 0, 0, 0);
  b.time_to_first_token.bounds = {0.2, 1.0};
  auto s = sum_figures({{"a", a}, {"b", b}});
  EXPECT_EQ(s.time_to_first_token.count, 3);
}

TEST(figures_sum, of_no_worker_is_empty) {
  auto s = sum_figures({});
  EXPECT_EQ(s.device_blocks_total, 0);
  EXPECT_EQ(s.prefix_hit_rate, 0.0);
  EXPECT_EQ(s.kv_utilisation, 0.0);
}

} // namespace
} // namespace kvactor::cluster
