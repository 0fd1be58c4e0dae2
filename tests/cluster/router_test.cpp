#include "cluster/router.hpp"

#include <gtest/gtest.h>

namespace kvactor::cluster {
namespace {

router two_live(router_options o = {}) {
  router r(2, o);
  r.set_live(0, {100, 0});
  r.set_live(1, {100, 0});
  return r;
}

TEST(router, refuses_when_no_worker_is_live) {
  router r(2);
  EXPECT_EQ(r.num_live(), 0u);
  EXPECT_FALSE(r.route(std::nullopt, 1));
  r.set_live(1, {10, 0});
  r.set_lost(1);
  EXPECT_FALSE(r.route(42, 1));
}

TEST(router, spreads_a_burst_between_reports) {
  router r = two_live();
  std::vector<size_t> got;
  for (int i = 0; i < 4; ++i)
    got.push_back(r.route(std::nullopt, 2)->worker);
  EXPECT_EQ(got, (std::vector<size_t>{0, 1, 0, 1}));
  EXPECT_EQ(r.num_routed(0), 2);
  EXPECT_EQ(r.num_live_requests(1), 2);
}

TEST(router, prefers_the_shorter_queue_then_more_free_blocks) {
  router r = two_live();
  r.report(0, {500, 3});
  r.report(1, {50, 1});
  EXPECT_EQ(r.route(std::nullopt, 1)->worker, 1u); // shorter queue wins over free blocks
  r.report(0, {500, 0});
  r.report(1, {50, 0});
  EXPECT_EQ(r.route(std::nullopt, 1)->worker, 0u); // equal queues: more free blocks
}

TEST(router, sends_a_shared_prefix_to_the_same_worker) {
  router r = two_live();
  auto first = r.route(7, 2);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->reason, router::why::load);
  for (int i = 0; i < 3; ++i) {
    auto again = r.route(7, 2);
    EXPECT_EQ(again->worker, first->worker);
    EXPECT_EQ(again->reason, router::why::affinity);
  }
  // Another prefix is balanced by load: the affine worker has 4 routed.
  EXPECT_NE(r.route(8, 2)->worker, first->worker);
}

TEST(router, leaves_affinity_when_the_worker_has_no_capacity) {
  router_options o;
  o.affinity_max_waiting = 2;
  router r = two_live(o);
  const size_t w = r.route(7, 1)->worker;
  EXPECT_EQ(r.route(7, 1)->worker, w); // waiting 1 < 2
  auto third = r.route(7, 1);          // waiting 2: full
  EXPECT_NE(third->worker, w);
  EXPECT_EQ(third->reason, router::why::load);
  // Free blocks count too.
  r.report(0, {3, 0});
  r.report(1, {100, 0});
  r.route(9, 1);                       // 9 -> the worker with more blocks, 1
  r.report(1, {2, 0});
  EXPECT_EQ(r.route(9, 5)->reason, router::why::load);
}

// A closed loop (issue 28): a worker reported 3 running and 1 waiting of one
// prefix group; each request that ends is replaced by one of the same group.
// The replacements take the ended ones' places, so nothing more waits: the
// group stays, however many pass between two reports.
TEST(router, keeps_a_group_whose_requests_replace_ended_ones) {
  router_options o;
  o.affinity_max_waiting = 4;
  router r = two_live(o);
  const size_t w = r.route(7, 1)->worker;
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(r.route(7, 1)->worker, w);
  r.report(0, {100, w == 0 ? 1 : 0});
  r.report(1, {100, w == 1 ? 1 : 0});
  for (int i = 0; i < 20; ++i) {
    r.ended(w);
    auto next = r.route(7, 1);
    EXPECT_EQ(next->worker, w) << "after " << i << " replacements";
    EXPECT_EQ(next->reason, router::why::affinity);
  }
  EXPECT_EQ(r.num_live_requests(w), 4);
  EXPECT_EQ(r.num_routed(1 - w), 0);
}

// The same worker really filling up: 1 waiting at the report and 3 more
// since, with none ended, makes 4 waiting; the group moves to the other
// worker and stays there.
TEST(router, moves_a_group_off_a_worker_that_really_is_full) {
  router_options o;
  o.affinity_max_waiting = 4;
  router r = two_live(o);
  const size_t w = r.route(7, 1)->worker;
  for (int i = 0; i < 3; ++i)
    r.route(7, 1);
  r.report(0, {100, w == 0 ? 1 : 0});
  r.report(1, {100, w == 1 ? 1 : 0});
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(r.route(7, 1)->worker, w);
  auto moved = r.route(7, 1);
  EXPECT_EQ(moved->worker, 1 - w);
  EXPECT_EQ(moved->reason, router::why::load);
  auto next = r.route(7, 1);
  EXPECT_EQ(next->worker, 1 - w);
  EXPECT_EQ(next->reason, router::why::affinity);
  // Ends let the waiting ones run: the estimate falls with them.
  r.report(1 - w, {100, 1});
  for (int i = 0; i < 4; ++i)
    r.ended(w);
  EXPECT_EQ(r.route(8, 1)->worker, w); // 0 waiting against 1
}

TEST(router, forgets_the_prefixes_of_a_lost_worker_and_takes_it_back) {
  router r = two_live();
  const size_t w = r.route(7, 1)->worker;
  r.set_lost(w);
  EXPECT_EQ(r.num_live(), 1u);
  auto moved = r.route(7, 1);
  EXPECT_NE(moved->worker, w);
  r.set_live(w, {1000, 0});
  EXPECT_EQ(r.route(7, 1)->worker, moved->worker); // the prefix now lives there
  EXPECT_EQ(r.route(std::nullopt, 1)->worker, w);  // the rejoined worker takes load
}

TEST(router, counts_ended_requests) {
  router r = two_live();
  r.route(std::nullopt, 1);
  r.route(std::nullopt, 1);
  r.ended(0);
  EXPECT_EQ(r.num_live_requests(0), 0);
  EXPECT_EQ(r.num_live_requests(1), 1);
  r.ended(0); // never below zero
  EXPECT_EQ(r.num_live_requests(0), 0);
}

TEST(router, starts_its_affinity_table_afresh_when_full) {
  router_options o;
  o.max_affinity_entries = 2;
  router r = two_live(o);
  const size_t a = r.route(1, 1)->worker;
  r.route(2, 1);
  r.route(3, 1); // the table was full: it holds only 3 now
  r.report(0, {100, 0});
  r.report(1, {100, 0});
  auto again = r.route(1, 1);
  EXPECT_EQ(again->reason, router::why::load);
  (void)a;
}

} // namespace
} // namespace kvactor::cluster
