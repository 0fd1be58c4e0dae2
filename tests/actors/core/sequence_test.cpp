#include "actors/core/sequence.hpp"

#include "sequence_builder.hpp"

#include <gtest/gtest.h>

namespace kvactor {
namespace {

using testing::token_run;

TEST(sequence, holds_prompt_and_output_tokens) {
  sequence seq(1, {5, 6, 7}, 2, 9);
  EXPECT_EQ(seq.priority(), 2);
  EXPECT_EQ(seq.arrival(), 9u);
  seq.append_token(8);
  EXPECT_EQ(seq.num_tokens(), 4);
  EXPECT_EQ(seq.num_prompt_tokens(), 3);
  EXPECT_EQ(seq.num_output_tokens(), 1);
  EXPECT_EQ(seq.output()[0], 8);
  EXPECT_EQ(seq.last_token(), 8);
  EXPECT_EQ(seq.status(), sequence_status::waiting);
  EXPECT_EQ(seq.reason(), finish_reason::none);
}

TEST(sequence, allows_exactly_the_documented_transitions) {
  using enum sequence_status;
  const sequence_status all[] = {waiting, running, swapped, finished};
  int allowed = 0;
  for (auto from : all)
    for (auto to : all)
      allowed += is_valid_transition(from, to);
  EXPECT_EQ(allowed, 8);
  EXPECT_TRUE(is_valid_transition(running, waiting));  // recompute
  EXPECT_TRUE(is_valid_transition(running, swapped));
  EXPECT_TRUE(is_valid_transition(swapped, running));
  EXPECT_TRUE(is_valid_transition(swapped, waiting)); // no host room after all: recompute
  EXPECT_TRUE(is_valid_transition(swapped, finished)); // abort while swapped
  EXPECT_FALSE(is_valid_transition(waiting, swapped));
  EXPECT_FALSE(is_valid_transition(finished, running));
}

TEST(sequence, finishes_once_with_a_reason) {
  sequence seq(1, {1});
  seq.set_status(sequence_status::running);
  seq.finish(finish_reason::stop);
  EXPECT_TRUE(seq.is_finished());
  EXPECT_EQ(seq.reason(), finish_reason::stop);
  EXPECT_EQ(to_string(seq.reason()), "stop");
}

TEST(sequence_death, rejects_invalid_transitions) {
  sequence seq(1, {1});
  EXPECT_DEATH(seq.set_status(sequence_status::swapped), "invalid sequence status transition");
  seq.finish(finish_reason::aborted);
  EXPECT_DEATH(seq.finish(finish_reason::eos), "invalid sequence status transition");
}

TEST(sequence, fork_copies_tokens_and_progress_under_a_new_id) {
  sequence parent(1, token_run(5), 3, 0);
  parent.add_computed_tokens(5);
  parent.count_preemption();
  sequence child = parent.fork(2, 7);
  EXPECT_EQ(child.id(), 2u);
  EXPECT_EQ(child.arrival(), 7u);
  EXPECT_EQ(child.priority(), 3);
  EXPECT_EQ(child.num_computed_tokens(), 5);
  EXPECT_EQ(child.num_preemptions(), 0);
  EXPECT_TRUE(std::ranges::equal(child.tokens(), parent.tokens()));
}

} // namespace
} // namespace kvactor
