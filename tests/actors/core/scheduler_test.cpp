#include "actors/core/scheduler.hpp"

#include "scheduler_driver.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace kvactor::testing;

TEST(scheduler, batches_prefill_and_decode_and_ends_at_max_tokens) {
  driver d(32, 0, config(64));
  ASSERT_FALSE(d.add(1, token_run(10), 3));
  ASSERT_FALSE(d.add(2, token_run(6, 50), 2));
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 2u);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 10u);
  EXPECT_TRUE(plan.seqs[0].sample && plan.seqs[1].sample);
  plan = d.step(); // both decode one token
  ASSERT_EQ(plan.seqs.size(), 2u);
  EXPECT_EQ(plan.seqs[0].start, 10);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 1u);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(1).finished, finish_reason::max_tokens);
  EXPECT_EQ(d.output(1, 10).size(), 3u);
  EXPECT_EQ(d.output(2, 6).size(), 2u);
  EXPECT_EQ(d.output(1, 10), reference(token_run(10), 3));
  d.expect_idle_and_sound();
}

TEST(scheduler, splits_long_prompts_into_chunks_under_the_token_budget) {
  driver d(32, 0, config(16));
  d.add(1, token_run(40), 2);
  std::vector<size_t> chunks;
  std::vector<bool> samples;
  for (int i = 0; i < 3; ++i) {
    auto plan = d.step();
    chunks.push_back(plan.seqs[0].tokens.size());
    samples.push_back(plan.seqs[0].sample);
  }
  EXPECT_THAT(chunks, ElementsAre(16, 16, 8));
  EXPECT_THAT(samples, ElementsAre(false, false, true));
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 40), reference(token_run(40), 2));
}

TEST(scheduler, decodes_before_admitting_prefill_and_shares_the_budget) {
  driver d(32, 0, config(8));
  d.add(1, token_run(4), 4);
  d.step();
  d.add(2, token_run(20, 100), 1);
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 2u);
  EXPECT_EQ(plan.seqs[0].id, 1u); // the decode first
  EXPECT_EQ(plan.seqs[1].tokens.size(), 7u); // the rest of the budget
}

TEST(scheduler, runs_higher_priority_first) {
  driver d(32, 0, config(8));
  d.add(1, token_run(8), 1, 0);
  d.add(2, token_run(8, 100), 1, 5);
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 1u);
  EXPECT_EQ(plan.seqs[0].id, 2u);
}

TEST(scheduler, orders_by_priority_then_running_preempted_new_then_arrival) {
  driver d(32, 0, config(64));
  d.add(1, token_run(4), 8);
  d.add(2, token_run(4, 100), 8);
  d.step(); // both running
  d.add(3, token_run(4, 200), 8);
  d.add(4, token_run(4, 300), 8, 5);
  d.add(5, token_run(4, 400), 8);
  d.sched().force_preemption(2, preemption_mode::recompute);
  auto plan = d.step();
  std::vector<seq_id> ids;
  for (const auto& s : plan.seqs)
    ids.push_back(s.id);
  EXPECT_THAT(ids, ElementsAre(4, 1, 2, 3, 5));
  d.run_until_idle();
  d.expect_idle_and_sound();
}

TEST(scheduler, refuses_a_request_that_can_never_fit) {
  driver d(4, 0, config(64));
  auto err = d.add(1, token_run(14), 4); // 18 tokens: 5 blocks of 4
  ASSERT_TRUE(err.has_value());
  EXPECT_THAT(*err, ::testing::HasSubstr("needs 5 KV blocks"));
  EXPECT_EQ(d.sched().num_sequences(), 0);
  // 13 + 4 tokens, the last never written: exactly the pool's 16 slots.
  ASSERT_FALSE(d.add(2, token_run(13), 4));
  d.run_until_idle();
  EXPECT_EQ(d.output(2, 13), reference(token_run(13), 4));
  d.expect_idle_and_sound();
}

TEST(scheduler, reuses_the_prefix_cache_and_reports_cached_tokens) {
  driver d(32, 0, config(64));
  d.add(1, token_run(13), 1);
  d.run_until_idle();
  d.add(2, concat(token_run(12), token_run(3, 500)), 1);
  auto plan = d.step();
  EXPECT_EQ(plan.seqs[0].start, 12);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 3u);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(2).num_cached_tokens, 12);
}

class preemption : public ::testing::TestWithParam<preemption_mode> {};

TEST_P(preemption, under_memory_pressure_keeps_outputs_identical) {
  // 12 blocks of 4 slots; three sequences that each grow to 8 blocks.
  driver d(12, 32, config(64, GetParam()));
  std::vector<std::vector<token_id>> prompts = {token_run(10), token_run(9, 100),
                                                token_run(11, 200)};
  for (seq_id id = 1; id <= 3; ++id)
    d.add(id, prompts[id - 1], 20);
  d.run_until_idle();
  EXPECT_GT(d.sched().num_preemptions(), 0);
  for (seq_id id = 1; id <= 3; ++id) {
    EXPECT_EQ(d.finished().at(id).finished, finish_reason::max_tokens);
    EXPECT_EQ(d.output(id, prompts[id - 1].size()), reference(prompts[id - 1], 20))
      << "sequence " << id;
  }
  int preempted = 0;
  for (auto& [id, u] : d.finished())
    preempted += u.num_preemptions;
  EXPECT_EQ(preempted, d.sched().num_preemptions());
  d.expect_idle_and_sound();
}

INSTANTIATE_TEST_SUITE_P(scheduler, preemption,
                         ::testing::Values(preemption_mode::swap, preemption_mode::recompute));

TEST(scheduler, preempts_the_latest_arrival_and_resumes_it_before_new_ones) {
  driver d(6, 0, config(64, preemption_mode::recompute));
  d.add(1, token_run(8), 8); // 2 blocks, grows to 4
  d.add(2, token_run(8, 100), 8);
  d.step();
  EXPECT_EQ(d.sched().num_running(), 2);
  for (int i = 0; i < 10 && d.sched().num_preemptions() == 0; ++i)
    d.step();
  ASSERT_EQ(d.sched().num_preemptions(), 1);
  EXPECT_EQ(d.sched().find(2)->status(), sequence_status::waiting);
  EXPECT_EQ(d.sched().find(1)->status(), sequence_status::running);
  d.add(3, token_run(2, 300), 1); // arrives later: must wait for 2
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(2).num_preemptions, 1);
  d.expect_idle_and_sound();
}

TEST(scheduler, swap_out_frees_device_blocks_only_when_the_copy_completes) {
  driver d(16, 16, config(64));
  d.add(1, token_run(9), 4);
  d.step();
  const int32_t used = d.blocks().pool().num_used_blocks();
  d.hold_swaps = true;
  d.sched().force_preemption(1, preemption_mode::swap);
  auto plan = d.step();
  EXPECT_TRUE(plan.seqs.empty());
  EXPECT_EQ(d.sched().find(1)->status(), sequence_status::swapped);
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), used); // copy still in flight
  EXPECT_EQ(d.host().num_used_blocks(), used);
  d.complete_swaps();
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), 0);
  d.step(); // orders the swap-in, which the driver holds
  EXPECT_EQ(d.sched().find(1)->status(), sequence_status::swapped);
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), used);
  d.complete_swaps();
  EXPECT_EQ(d.sched().find(1)->status(), sequence_status::running);
  EXPECT_EQ(d.host().num_used_blocks(), 0);
  d.hold_swaps = false;
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 9), reference(token_run(9), 4));
  d.expect_idle_and_sound();
}

// Plans carry each sequence's block table as a change (table_delta.hpp).
TEST(scheduler, plans_carry_only_the_blocks_a_step_adds) {
  driver d(32, 0, config(64));
  d.add(1, token_run(6), 4);
  d.add(2, token_run(3, 50), 4);
  std::vector<table_delta> changes_of_1, changes_of_2;
  for (int i = 0; i < 4; ++i) {
    auto plan = d.step();
    ASSERT_EQ(plan.seqs.size(), 2u);
    changes_of_1.push_back(plan.seqs[0].blocks);
    changes_of_2.push_back(plan.seqs[1].blocks);
  }
  // 1 computes positions 0-5, 6, 7, 8: a new table, then block 4 for
  // position 8; 2 computes 0-2, 3, 4, 5: block 3 for position 4.
  EXPECT_THAT(changes_of_1, ElementsAre(table_delta{0, {0, 1}}, table_delta{2, {}},
                                        table_delta{2, {}}, table_delta{2, {4}}));
  EXPECT_THAT(changes_of_2, ElementsAre(table_delta{0, {2}}, table_delta{1, {}},
                                        table_delta{1, {3}}, table_delta{2, {}}));
  EXPECT_THAT(d.executor_table(1), ElementsAre(0, 1, 4));
  EXPECT_THAT(d.executor_table(2), ElementsAre(2, 3));
  d.run_until_idle();
  d.expect_idle_and_sound();
}

TEST(scheduler, a_swap_in_starts_the_executors_table_over) {
  driver d(16, 16, config(64));
  d.add(1, token_run(6), 4);
  d.step(); // blocks 0, 1
  d.sched().force_preemption(1, preemption_mode::swap);
  EXPECT_TRUE(d.step().seqs.empty()); // swapped out: 1 and 0 go to the back of the free list
  EXPECT_TRUE(d.step().seqs.empty()); // swapped in, into blocks 2 and 3
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 1u);
  EXPECT_EQ(plan.seqs[0].start, 6);
  EXPECT_EQ(plan.seqs[0].blocks, (table_delta{0, {2, 3}}));
  EXPECT_THAT(d.executor_table(1), ElementsAre(2, 3));
  plan = d.step(); // position 7
  EXPECT_EQ(plan.seqs[0].blocks, (table_delta{2, {}}));
  plan = d.step(); // position 8 opens a block
  EXPECT_EQ(plan.seqs[0].blocks, (table_delta{2, {4}}));
  EXPECT_THAT(d.executor_table(1), ElementsAre(2, 3, 4));
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 6), reference(token_run(6), 4));
  d.expect_idle_and_sound();
}

TEST(scheduler, a_recompute_starts_the_executors_table_over_from_the_prefix_cache) {
  driver d(16, 0, config(64, preemption_mode::recompute));
  d.add(1, token_run(9), 4);
  d.step(); // positions 0-8 in blocks 0, 1, 2
  d.step(); // position 9
  EXPECT_THAT(d.executor_table(1), ElementsAre(0, 1, 2));
  d.sched().force_preemption(1, preemption_mode::recompute);
  // Released with 10 tokens computed: blocks 0 and 1 are cached, 2 goes to
  // the back of the free list. In the same step the recompute takes 0 and 1
  // from the cache and block 3 for positions 8-10.
  auto plan = d.step();
  ASSERT_EQ(plan.seqs.size(), 1u);
  EXPECT_EQ(plan.seqs[0].start, 8);
  EXPECT_EQ(plan.seqs[0].tokens.size(), 3u);
  EXPECT_EQ(plan.seqs[0].blocks, (table_delta{0, {0, 1, 3}}));
  EXPECT_THAT(d.executor_table(1), ElementsAre(0, 1, 3));
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 9), reference(token_run(9), 4));
  d.expect_idle_and_sound();
}

// Aborts in every state end the sequence exactly once and return every block.
TEST(scheduler, abort_while_waiting_or_running_ends_at_once) {
  driver d(16, 8, config(64));
  d.add(1, token_run(5), 4);
  auto now = d.abort(1);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].finished, finish_reason::aborted);
  d.add(2, token_run(5), 4);
  d.step();
  now = d.abort(2);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_TRUE(d.abort(2).empty()); // unknown by now
  d.expect_idle_and_sound();
}

TEST(scheduler, abort_during_a_step_drops_the_late_token) {
  driver d(16, 8, config(64));
  d.add(1, token_run(5), 4);
  step_plan plan = d.plan();
  EXPECT_TRUE(d.abort(1).empty()); // the step holds it
  auto updates = d.sched().update_from_output(d.execute(plan));
  d.run_commands();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].finished, finish_reason::aborted);
  EXPECT_EQ(updates[0].token, no_token);
  d.add(2, token_run(3), 1);
  plan = d.plan();
  EXPECT_THAT(plan.released, ElementsAre(1)); // the executor drops its state
  d.apply(d.sched().update_from_output(d.execute(plan)));
  d.run_commands();
  d.expect_idle_and_sound();
}

TEST(scheduler, abort_during_swaps_waits_for_the_copy) {
  driver d(16, 8, config(64));
  d.add(1, token_run(9), 4);
  d.step();
  d.hold_swaps = true;
  d.sched().force_preemption(1, preemption_mode::swap);
  d.step();
  EXPECT_TRUE(d.abort(1).empty()); // swap-out in flight
  auto done = d.complete_swaps();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].finished, finish_reason::aborted);
  d.expect_idle_and_sound();

  d.add(2, token_run(9), 4);
  d.step();
  d.sched().force_preemption(2, preemption_mode::swap);
  d.step();
  d.complete_swaps();
  EXPECT_EQ(d.abort(2).size(), 1u); // resting in host memory: at once
  d.expect_idle_and_sound();

  d.add(3, token_run(9), 4);
  d.step();
  d.sched().force_preemption(3, preemption_mode::swap);
  d.step();
  d.complete_swaps();
  d.step(); // swap-in ordered
  EXPECT_TRUE(d.abort(3).empty()); // swap-in in flight
  done = d.complete_swaps();
  ASSERT_EQ(done.size(), 1u);
  d.expect_idle_and_sound();
}

// The order a loaded runtime produced: a swap-in is ordered, the request is
// cancelled, then the block manager's refusal of the swap-in arrives. The
// sequence must end then, not rest in host memory with its abort pending.
TEST(scheduler, abort_during_a_refused_swap_in_ends_at_the_refusal) {
  driver d(4, 8, config(64));
  d.add(1, token_run(4), 8);
  d.add(2, token_run(4, 100), 8);
  d.step(); // one block each
  d.hold_swaps = true;
  d.sched().force_preemption(1, preemption_mode::swap);
  d.step(); // 1 swaps out; 2 takes a second block
  d.complete_swaps();
  d.add(3, token_run(8, 200), 4);
  d.step(); // 3 takes the last two blocks; 1's swap-in is ordered and refused
  ASSERT_EQ(d.num_swap_ins_denied, 1);
  EXPECT_TRUE(d.abort(1).empty()); // the refusal is still on its way
  auto done = d.complete_swaps();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, 1);
  EXPECT_EQ(done[0].finished, finish_reason::aborted);
  EXPECT_EQ(d.host().num_free_blocks(), d.host().num_blocks());
  d.hold_swaps = false;
  d.run_until_idle();
  d.expect_idle_and_sound();
}

// The swap actor owns the host pool's room: a swap-out it cannot hold comes
// back denied, and the sequence is recomputed instead, to the same tokens.
// In `d`, whose host pool holds 3 blocks: 1 and 2 grow to three blocks
// each; 1 swaps out and takes the whole pool, then 2's swap-out is refused.
// Swaps are held: the refusal is still on its way.
void refuse_the_second_swap_out(driver& d) {
  d.add(1, token_run(9), 6);
  d.add(2, token_run(9, 100), 6);
  d.step(); // three blocks each
  d.hold_swaps = true;
  d.sched().force_preemption(1, preemption_mode::swap);
  d.step(); // 1 takes the whole host pool
  d.sched().force_preemption(2, preemption_mode::swap);
  d.step();
  ASSERT_EQ(d.num_swap_outs_denied, 1);
}

TEST(scheduler, a_swap_out_the_host_pool_has_no_room_for_is_recomputed) {
  driver d(16, 3, config(64));
  ASSERT_NO_FATAL_FAILURE(refuse_the_second_swap_out(d));
  EXPECT_EQ(d.sched().find(2)->status(), sequence_status::swapped); // until the denial comes
  const int32_t used = d.blocks().pool().num_used_blocks();
  d.complete_swaps();
  EXPECT_EQ(d.sched().find(1)->status(), sequence_status::swapped);
  EXPECT_EQ(d.sched().find(2)->status(), sequence_status::waiting);
  EXPECT_EQ(d.sched().find(2)->num_computed_tokens(), 0);
  EXPECT_EQ(d.blocks().pool().num_used_blocks(), used - 6); // 1's copied out, 2's released
  d.hold_swaps = false;
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 9), reference(token_run(9), 6));
  EXPECT_EQ(d.output(2, 9), reference(token_run(9, 100), 6));
  EXPECT_EQ(d.finished().at(2).num_preemptions, 1);
  EXPECT_EQ(d.sched().num_preemptions(), 2);
  EXPECT_EQ(d.sched().num_preemptions_by_swap(), 1); // 1's; 2's was refused
  EXPECT_EQ(d.sched().num_swap_outs_refused(), 1);
  d.expect_idle_and_sound();
}

// A sequence the host pool could not hold even empty is recomputed at once,
// without asking the swap actor.
TEST(scheduler, a_sequence_larger_than_the_host_pool_is_recomputed_at_once) {
  driver d(16, 2, config(64));
  d.add(1, token_run(9), 4);
  d.step(); // three blocks
  d.sched().force_preemption(1, preemption_mode::swap);
  d.step();
  EXPECT_EQ(d.num_swap_outs_denied, 0);
  EXPECT_EQ(d.host().num_used_blocks(), 0);
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 9), reference(token_run(9), 4));
  EXPECT_EQ(d.finished().at(1).num_preemptions, 1);
  EXPECT_EQ(d.sched().num_preemptions_by_swap(), 0);
  EXPECT_EQ(d.sched().num_swap_outs_refused(), 0); // never asked
  d.expect_idle_and_sound();
}

TEST(scheduler, abort_during_a_refused_swap_out_ends_at_the_refusal) {
  driver d(16, 3, config(64));
  ASSERT_NO_FATAL_FAILURE(refuse_the_second_swap_out(d));
  EXPECT_TRUE(d.abort(2).empty()); // the refusal is still on its way
  auto done = d.complete_swaps();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].id, 2);
  EXPECT_EQ(done[0].finished, finish_reason::aborted);
  EXPECT_EQ(d.sched().find(2), nullptr);
  d.hold_swaps = false;
  d.run_until_idle();
  EXPECT_EQ(d.output(1, 9), reference(token_run(9), 6));
  d.expect_idle_and_sound();
}

TEST(scheduler, a_row_without_a_finite_logit_ends_its_sequence_with_an_error_and_no_token) {
  driver d(16, 8, config(64));
  d.add(1, token_run(5), 4);
  d.add(2, token_run(7), 4);
  d.step(); // both prefilled, each with its first token
  step_output out = d.execute(d.plan());
  ASSERT_EQ(out.sampled.size(), 2u);
  for (sampled_token& s : out.sampled)
    s.no_finite_logit = s.id == 1;
  const auto updates = d.sched().update_from_output(out);
  d.run_commands();
  ASSERT_EQ(updates.size(), 2u);
  for (const sequence_update& u : updates)
    if (u.id == 1) {
      EXPECT_EQ(u.finished, finish_reason::error);
      EXPECT_EQ(u.error_code, errc::non_finite_logits);
      EXPECT_THAT(u.error, HasSubstr("output token 1 held no finite number"));
      EXPECT_EQ(u.token, no_token);
    } else {
      EXPECT_EQ(u.finished, finish_reason::none); // the other goes on
    }
  d.apply(updates);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(2).finished, finish_reason::max_tokens);
  d.expect_idle_and_sound();
}

TEST(scheduler, eos_ends_a_sequence_unless_ignored) {
  auto prompt = token_run(6);
  auto expected = reference(prompt, 5);
  scheduler_config c = config(64);
  c.eos_tokens = {expected[1]};
  driver d(32, 0, c);
  d.add(1, prompt, 5);
  d.run_until_idle();
  EXPECT_EQ(d.finished().at(1).finished, finish_reason::eos);
  EXPECT_EQ(d.output(1, 6), std::vector<token_id>(expected.begin(), expected.begin() + 2));
}

TEST(scheduler, forced_preemptions_of_both_kinds_keep_outputs_exact) {
  driver d(64, 64, config(64));
  for (seq_id id = 1; id <= 3; ++id)
    d.add(id, token_run(7, 50 * int(id)), 40);
  for (int i = 0; i < 12; ++i) {
    d.sched().force_preemption(std::nullopt, i % 2 ? preemption_mode::swap
                                                   : preemption_mode::recompute);
    d.step();
  }
  d.run_until_idle();
  for (seq_id id = 1; id <= 3; ++id)
    EXPECT_EQ(d.output(id, 7), reference(token_run(7, 50 * int(id)), 40));
  EXPECT_GE(d.sched().num_preemptions(), 6); // some found nothing running to preempt
  d.expect_idle_and_sound();
}

} // namespace
} // namespace kvactor
