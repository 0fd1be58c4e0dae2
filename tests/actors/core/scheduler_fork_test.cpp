// Parallel sampling: n choices of one prompt, forked after the prompt short
// of its last token is computed, sharing its blocks with copy-on-write.

#include "actors/core/scheduler.hpp"

#include "scheduler_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using namespace kvactor::testing;

TEST(scheduler_fork, computes_the_prompt_once_and_copies_only_the_partial_block) {
  driver d(32, 0, config(64));
  ASSERT_FALSE(d.add(100, token_run(10), 3, 0, 3, 7));
  auto plan = d.step(); // the prompt short of its last token, sampling nothing
  ASSERT_EQ(plan.seqs.size(), 1u);
  EXPECT_EQ(plan.seqs[0].id, 100u);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 9u);
  EXPECT_FALSE(plan.seqs[0].sample);
  // Forked: three sequences hold the same three blocks.
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), 3);
  plan = d.step(); // each choice computes token 9 into its own copy of block 2
  ASSERT_EQ(plan.seqs.size(), 3u);
  for (seq_id c = 0; c < 3; ++c) {
    EXPECT_EQ(plan.seqs[c].id, 100 + c);
    EXPECT_EQ(plan.seqs[c].start, 9);
    EXPECT_EQ(plan.seqs[c].tokens.size(), 1u);
    EXPECT_TRUE(plan.seqs[c].sample);
    EXPECT_EQ(plan.seqs[c].sampling.seed, 7 + c);
  }
  EXPECT_EQ(plan.copies.size(), 2u); // the last choice to write keeps the original
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), 5); // not 9: blocks 0 and 1 stay shared
  EXPECT_EQ(d.executor_table(100)[0], d.executor_table(102)[0]);
  EXPECT_NE(d.executor_table(100)[2], d.executor_table(102)[2]);
  d.run_until_idle();
  for (seq_id c = 0; c < 3; ++c) {
    EXPECT_EQ(d.finished().at(100 + c).finished, finish_reason::max_tokens);
    EXPECT_EQ(d.output(100 + c, 10), reference(token_run(10), 3, 7 + c)) << "choice " << c;
  }
  EXPECT_NE(d.output(100, 10), d.output(101, 10)); // the seeds differ
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, a_prompt_ending_a_block_shares_every_block_and_copies_none) {
  driver d(32, 0, config(64));
  ASSERT_FALSE(d.add(100, token_run(9), 2, 0, 4));
  d.step();
  const auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 4u);
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), 2 + 4);
  d.run_until_idle();
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, a_one_token_prompt_forks_at_once) {
  driver d(32, 0, config(64));
  ASSERT_FALSE(d.add(100, {5}, 2, 0, 3, 1));
  const auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 3u);
  for (const auto& s : plan.seqs)
    EXPECT_TRUE(s.sample);
  d.run_until_idle();
  for (seq_id c = 0; c < 3; ++c)
    EXPECT_EQ(d.output(100 + c, 1), reference({5}, 2, 1 + c));
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, chunked_prefill_forks_after_the_last_chunk) {
  driver d(32, 0, config(4));
  ASSERT_FALSE(d.add(100, token_run(10), 2, 0, 2, 3));
  for (int i = 0; i < 3; ++i) { // 4 + 4 + 1 tokens
    const auto plan = d.step();
    ASSERT_EQ(plan.seqs.size(), 1u) << "step " << i;
    EXPECT_FALSE(plan.seqs[0].sample);
  }
  EXPECT_EQ(d.step().seqs.size(), 2u);
  d.run_until_idle();
  for (seq_id c = 0; c < 2; ++c)
    EXPECT_EQ(d.output(100 + c, 10), reference(token_run(10), 2, 3 + c));
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, aborting_before_the_fork_ends_every_choice) {
  driver d(32, 0, config(4));
  ASSERT_FALSE(d.add(100, token_run(10), 2, 0, 3));
  ASSERT_FALSE(d.add(200, token_run(10, 50), 2, 0, 2));
  d.step(); // 100's first chunk; 200 waits
  const auto ends = d.abort(200);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].id, 200u);
  EXPECT_EQ(ends[1].id, 201u);
  // During a step: the ends come with its output.
  auto p = d.sched().begin_step();
  d.run_commands();
  while (!p.plan) {
    p = d.sched().on_reservation(d.ledger().reserve(p.reserve));
    d.run_commands();
  }
  EXPECT_TRUE(d.sched().abort(100).empty());
  const auto late = d.sched().update_from_output(d.execute(*p.plan));
  d.apply(late);
  d.run_commands();
  ASSERT_EQ(late.size(), 3u);
  for (seq_id c = 0; c < 3; ++c) {
    EXPECT_EQ(late[c].id, 100 + c);
    EXPECT_EQ(late[c].finished, finish_reason::aborted);
  }
  d.run_until_idle();
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, an_aborted_choice_leaves_its_siblings_running) {
  driver d(32, 0, config(64));
  ASSERT_FALSE(d.add(100, token_run(10), 4, 0, 3, 11));
  d.step();
  d.step();
  ASSERT_EQ(d.abort(101).size(), 1u);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(101).finished, finish_reason::aborted);
  for (seq_id c : {0, 2})
    EXPECT_EQ(d.output(100 + c, 10), reference(token_run(10), 4, 11 + c));
  d.expect_idle_and_sound();
}

class fork_preemption : public ::testing::TestWithParam<preemption_mode> {};

TEST_P(fork_preemption, choices_under_memory_pressure_equal_their_solo_runs) {
  // 14 blocks of 4 slots; two requests of three choices that each grow to 6 blocks.
  driver d(14, 40, config(64, GetParam()));
  const std::vector<token_id> a = token_run(10), b = token_run(7, 300);
  ASSERT_FALSE(d.add(100, a, 12, 0, 3, 5));
  ASSERT_FALSE(d.add(200, b, 14, 0, 3, 9));
  d.run_until_idle();
  EXPECT_GT(d.sched().num_preemptions(), 0);
  for (seq_id c = 0; c < 3; ++c) {
    EXPECT_EQ(d.output(100 + c, a.size()), reference(a, 12, 5 + c)) << "choice " << c;
    EXPECT_EQ(d.output(200 + c, b.size()), reference(b, 14, 9 + c)) << "choice " << c;
  }
  d.expect_idle_and_sound();
}

INSTANTIATE_TEST_SUITE_P(scheduler_fork, fork_preemption,
                         ::testing::Values(preemption_mode::swap, preemption_mode::recompute));

// The choices together, the prompt's full blocks shared (request_blocks):
// 8 choices of 10 + 8 tokens need 2 + 8 * 3 blocks, more than the pool,
// though each alone needs 5; 7 choices of 10 + 4 tokens need exactly 16 and
// run.
TEST(scheduler_fork, refuses_choices_that_could_never_fit_together) {
  driver d(16, 0, config(64));
  auto err = d.add(100, token_run(10), 8, 0, 8);
  ASSERT_TRUE(err.has_value());
  EXPECT_THAT(*err, ::testing::HasSubstr("needs 26 KV blocks of 4 tokens (104 tokens)"));
  EXPECT_THAT(*err, ::testing::HasSubstr("8 choices of 10 prompt tokens + 8 max tokens"));
  EXPECT_THAT(*err, ::testing::HasSubstr("the device pool has 16 (64 tokens)"));
  EXPECT_EQ(d.sched().num_sequences(), 0);
  ASSERT_FALSE(d.add(200, token_run(10), 4, 0, 7, 3));
  d.run_until_idle();
  for (seq_id c = 0; c < 7; ++c)
    EXPECT_EQ(d.output(200 + c, 10), reference(token_run(10), 4, 3 + c)) << "choice " << c;
  d.expect_idle_and_sound();
}

TEST(scheduler_fork, only_continuous_paged_scheduling_forks) {
  EXPECT_TRUE(scheduler(config(64), 8, 0, bs).forks());
  for (auto mode : {batching_mode::fixed, batching_mode::padded}) {
    scheduler_config c = config(64);
    c.batching = mode;
    EXPECT_FALSE(scheduler(c, 8, 0, bs).forks());
  }
  scheduler_config c = config(64);
  c.reservation = kv_reservation::contiguous;
  EXPECT_FALSE(scheduler(c, 8, 0, bs).forks());
}

} // namespace
} // namespace kvactor
