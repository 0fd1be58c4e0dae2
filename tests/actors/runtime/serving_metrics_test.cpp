#include "actors/runtime/serving_metrics.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace kvactor {
namespace {

using namespace std::chrono_literals;

const auto t0 = serving_metrics::clock::now();

// The bucket that holds `value`, by the histogram's own bounds.
size_t bucket_of(const histogram& h, double value) {
  size_t i = 0;
  while (i < h.bounds.size() && value > h.bounds[i])
    ++i;
  return i;
}

TEST(histogram, counts_each_observation_in_the_first_bucket_whose_bound_holds_it) {
  histogram h = latency_histogram();
  ASSERT_TRUE(std::is_sorted(h.bounds.begin(), h.bounds.end()));
  observe(h, 0.0005);
  observe(h, 0.001); // on a bound: that bucket (Prometheus' le)
  observe(h, 0.0011);
  observe(h, 1e6);   // above every bound
  EXPECT_EQ(h.counts[0], 2);
  EXPECT_EQ(h.counts[1], 1);
  EXPECT_EQ(h.counts.back(), 1);
  EXPECT_EQ(std::accumulate(h.counts.begin(), h.counts.end(), int64_t{0}), h.count);
  EXPECT_EQ(h.count, 4);
  EXPECT_DOUBLE_EQ(h.sum, 0.0005 + 0.001 + 0.0011 + 1e6);
}

TEST(serving_metrics, measures_queue_first_token_gaps_and_end_from_admission) {
  serving_metrics m;
  m.admitted(1, 5, t0);
  m.admitted(2, 7, t0);
  m.scheduled(1, t0 + 20ms);
  m.scheduled(1, t0 + 90ms); // only the first scheduling ends the queue time
  m.produced(1, t0 + 100ms);
  m.produced(1, t0 + 130ms);
  m.produced(1, t0 + 170ms);
  m.ended(1, false, t0 + 200ms);
  m.ended(2, true, t0 + 300ms); // aborted: no end-to-end latency
  m.stepped(0.004);
  runtime_figures f;
  m.fill(f);

  EXPECT_EQ(f.prompt_tokens, 12);
  EXPECT_EQ(f.tokens_generated, 3);
  EXPECT_EQ(f.requests_finished, 1);
  EXPECT_EQ(f.requests_aborted, 1);
  EXPECT_EQ(f.steps, 1);
  EXPECT_DOUBLE_EQ(f.busy_seconds, 0.004);
  EXPECT_EQ(m.num_admitted(), 2);
  EXPECT_EQ(f.queue_time.count, 1);
  EXPECT_NEAR(f.queue_time.sum, 0.020, 1e-9);
  EXPECT_EQ(f.time_to_first_token.count, 1);
  EXPECT_NEAR(f.time_to_first_token.sum, 0.100, 1e-9);
  EXPECT_EQ(f.time_to_first_token.counts[bucket_of(f.time_to_first_token, 0.1)], 1);
  EXPECT_EQ(f.inter_token_latency.count, 2);
  EXPECT_NEAR(f.inter_token_latency.sum, 0.070, 1e-9);
  EXPECT_EQ(f.e2e_latency.count, 1);
  EXPECT_NEAR(f.e2e_latency.sum, 0.200, 1e-9);
  EXPECT_EQ(f.step_time.count, 1);
  EXPECT_EQ(m.num_live(), 0);
}

TEST(serving_metrics, ignores_ids_it_does_not_track) {
  serving_metrics m;
  m.scheduled(9, t0);
  m.produced(9, t0);
  m.ended(9, false, t0);
  runtime_figures f;
  m.fill(f);
  EXPECT_EQ(f.queue_time.count + f.time_to_first_token.count + f.e2e_latency.count, 0);
  EXPECT_EQ(m.num_live(), 0);
}

} // namespace
} // namespace kvactor
