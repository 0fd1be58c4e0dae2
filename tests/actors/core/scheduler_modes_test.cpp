// The scheduler's modes for comparisons: static and padded batching,
// contiguous reservation, prefix caching off.

#include "scheduler_driver.hpp"

#include <map>

namespace kvactor {
namespace {

using namespace kvactor::testing;

// The step at which each sequence was first scheduled and the one after
// which it ended.
struct lifetimes {
  std::map<seq_id, int> first, last;
};

lifetimes run_and_record(driver& d) {
  lifetimes l;
  for (int step = 0; step < 1000 && d.sched().has_work(); ++step) {
    for (const auto& s : d.step().seqs)
      l.first.emplace(s.id, step);
    for (const auto& [id, u] : d.finished())
      l.last.emplace(id, step);
  }
  return l;
}

// Batches of two; of the three sequences 1 ends first, 2 last, and 3 waits
// for a place.
driver three_in_batches_of_two(batching_mode mode) {
  auto cfg = config(64);
  cfg.max_num_seqs = 2;
  cfg.batching = mode;
  driver d(32, 0, cfg);
  d.add(1, token_run(5), 2);
  d.add(2, token_run(5, 40), 6);
  d.add(3, token_run(5, 80), 2);
  return d;
}

TEST(scheduler, static_batching_admits_the_next_batch_only_after_the_last_end) {
  driver d = three_in_batches_of_two(batching_mode::fixed);
  const auto l = run_and_record(d);
  EXPECT_EQ(l.first.at(1), 0);
  EXPECT_EQ(l.first.at(2), 0);
  EXPECT_LT(l.last.at(1), l.last.at(2));
  EXPECT_EQ(l.first.at(3), l.last.at(2) + 1); // not when 1 ended
  EXPECT_EQ(d.output(2, 5), reference(token_run(5, 40), 6));
  d.expect_idle_and_sound();

  driver c = three_in_batches_of_two(batching_mode::continuous);
  const auto lc = run_and_record(c);
  EXPECT_EQ(lc.first.at(3), lc.last.at(1) + 1); // in 1's place at once
}

TEST(scheduler, a_static_batch_short_of_full_is_flagged_before_it_opens) {
  auto cfg = config(64);
  cfg.max_num_seqs = 2;
  for (auto mode : {batching_mode::fixed, batching_mode::padded, batching_mode::continuous}) {
    cfg.batching = mode;
    driver d(32, 0, cfg);
    EXPECT_FALSE(d.sched().would_open_a_partial_batch()); // nothing waits
    d.add(1, token_run(5), 2);
    EXPECT_EQ(d.sched().would_open_a_partial_batch(), mode != batching_mode::continuous);
    d.add(2, token_run(5, 40), 2);
    EXPECT_FALSE(d.sched().would_open_a_partial_batch()); // full
    d.step();
    d.add(3, token_run(5, 80), 2);
    EXPECT_FALSE(d.sched().would_open_a_partial_batch()); // a batch runs
    d.run_until_idle();
  }
}

TEST(scheduler, padded_batching_keeps_ended_rows_computing_until_the_batch_ends) {
  driver d = three_in_batches_of_two(batching_mode::padded);
  std::map<seq_id, std::vector<int>> steps; // the steps each sequence computed in
  std::map<seq_id, int> ended;
  for (int step = 0; step < 100 && d.sched().has_work(); ++step) {
    for (const auto& s : d.step().seqs)
      steps[s.id].push_back(step);
    for (const auto& [id, u] : d.finished())
      ended.emplace(id, step);
    if (ended.contains(1) && !ended.contains(2)) {
      EXPECT_THAT(d.abort(1), ::testing::IsEmpty()); // its request has ended
    }
    if (ended.contains(2) && !steps.contains(3)) { // only the padding row is left
      EXPECT_TRUE(d.sched().would_open_a_partial_batch());
    }
  }
  ASSERT_EQ(ended.size(), 3u);
  EXPECT_EQ(ended.at(1), 1); // prefill, then one decode: its end is sent at once
  EXPECT_LT(ended.at(1), ended.at(2));
  EXPECT_EQ(steps.at(1).back(), ended.at(2)); // a padding row until the batch's last end
  EXPECT_EQ(steps.at(1).size(), steps.at(2).size());
  EXPECT_EQ(steps.at(3).front(), ended.at(2) + 1);
  EXPECT_EQ(d.output(1, 5), reference(token_run(5), 2)); // no padding token reached it
  EXPECT_EQ(d.output(2, 5), reference(token_run(5, 40), 6));
  EXPECT_EQ(d.output(3, 5), reference(token_run(5, 80), 2));
  d.expect_idle_and_sound();
}

TEST(scheduler, padded_batching_drops_a_padding_row_before_preempting_a_live_one) {
  auto cfg = config(64);
  cfg.batching = batching_mode::padded;
  driver d(5, 4, cfg);
  d.add(1, token_run(4), 1);
  d.add(2, token_run(4, 40), 12);
  // Step 0 prefills both and ends 1; from step 1 it pads, a block each per 4
  // steps: at step 5 both need a third block and the pool has 5.
  std::vector<step_plan> plans;
  for (int step = 0; step < 6; ++step)
    plans.push_back(d.step());
  EXPECT_EQ(plans[4].seqs.size(), 2u);
  ASSERT_EQ(plans[5].seqs.size(), 1u);
  EXPECT_EQ(plans[5].seqs[0].id, 2);
  d.run_until_idle();
  EXPECT_EQ(d.sched().num_preemptions(), 0);
  EXPECT_EQ(d.output(2, 4), reference(token_run(4, 40), 12));
  d.expect_idle_and_sound();
}

TEST(scheduler, contiguous_reservation_admits_by_max_model_len) {
  auto cfg = config(64);
  cfg.reservation = kv_reservation::contiguous;
  cfg.max_model_len = 24; // 6 blocks held by each sequence
  driver d(16, 0, cfg);
  for (seq_id id = 1; id <= 3; ++id)
    ASSERT_FALSE(d.add(id, token_run(5, 40 * id), 3));
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 2u); // 3 x 6 > 16, though 3 x 2 blocks would do
  EXPECT_EQ(d.sched().num_reserved_blocks(), 12);
  const auto l = run_and_record(d);
  EXPECT_GT(l.first.at(3), 0);
  EXPECT_EQ(d.sched().num_reserved_blocks(), 0);
  d.expect_idle_and_sound();

  cfg.max_model_len = 80; // 20 blocks: more than the pool
  driver too_long(16, 0, cfg);
  auto err = too_long.add(1, token_run(5), 3);
  ASSERT_TRUE(err.has_value());
  EXPECT_THAT(*err, ::testing::HasSubstr("needs 20 KV blocks"));
}

TEST(scheduler, without_prefix_caching_recomputes_a_shared_prefix) {
  auto cfg = config(64);
  cfg.prefix_caching = false;
  driver d(32, 0, cfg);
  d.add(1, token_run(13), 1);
  d.run_until_idle();
  d.add(2, concat(token_run(12), token_run(3, 500)), 1);
  auto plan = d.step();
  EXPECT_EQ(plan.seqs[0].start, 0);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 15u);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(2).num_cached_tokens, 0);
}

} // namespace
} // namespace kvactor
