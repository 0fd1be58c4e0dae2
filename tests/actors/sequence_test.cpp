#include "actors/sequence.hpp"

#include "actors/block_hash.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace kvactor {
namespace {

std::vector<token_id> iota_tokens(int n, token_id first = 0) {
  std::vector<token_id> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(sequence, holds_prompt_and_output_tokens) {
  sequence seq(1, {5, 6, 7}, 16, 2, 9);
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
  EXPECT_EQ(allowed, 7);
  EXPECT_TRUE(is_valid_transition(running, waiting));  // recompute
  EXPECT_TRUE(is_valid_transition(running, swapped));
  EXPECT_TRUE(is_valid_transition(swapped, running));
  EXPECT_TRUE(is_valid_transition(swapped, finished)); // abort while swapped
  EXPECT_FALSE(is_valid_transition(waiting, swapped));
  EXPECT_FALSE(is_valid_transition(finished, running));
}

TEST(sequence, finishes_once_with_a_reason) {
  sequence seq(1, {1}, 16);
  seq.set_status(sequence_status::running);
  seq.finish(finish_reason::stop);
  EXPECT_TRUE(seq.is_finished());
  EXPECT_EQ(seq.reason(), finish_reason::stop);
  EXPECT_EQ(to_string(seq.reason()), "stop");
}

TEST(sequence_death, rejects_invalid_transitions) {
  sequence seq(1, {1}, 16);
  EXPECT_DEATH(seq.set_status(sequence_status::swapped), "invalid sequence status transition");
  seq.finish(finish_reason::aborted);
  EXPECT_DEATH(seq.finish(finish_reason::eos), "invalid sequence status transition");
}

TEST(sequence, chains_block_hashes_over_full_blocks_as_tokens_arrive) {
  sequence seq(1, iota_tokens(31), 16);
  ASSERT_EQ(seq.block_hashes().size(), 1u);
  auto tokens = seq.tokens();
  EXPECT_EQ(seq.block_hashes()[0], hash_block(root_block_hash, tokens.subspan(0, 16)));
  seq.append_token(99);
  ASSERT_EQ(seq.block_hashes().size(), 2u);
  EXPECT_EQ(seq.block_hashes()[1], hash_block(seq.block_hashes()[0], seq.tokens().subspan(16, 16)));
  EXPECT_EQ(seq.parent_hash(1), seq.block_hashes()[0]);
}

TEST(sequence, equal_blocks_after_different_prefixes_hash_differently) {
  auto a = iota_tokens(32);
  auto b = a;
  b[0] = 1000;
  sequence sa(1, a, 16), sb(2, b, 16);
  EXPECT_NE(sa.block_hashes()[1], sb.block_hashes()[1]);
}

TEST(sequence_death, computed_tokens_need_slots) {
  sequence seq(1, iota_tokens(4), 16);
  EXPECT_DEATH(seq.add_computed_tokens(1), "computed tokens without slots");
  seq.table().append(0);
  seq.add_computed_tokens(4);
  EXPECT_EQ(seq.num_uncomputed_tokens(), 0);
  EXPECT_DEATH(seq.add_computed_tokens(1), "computed tokens beyond the sequence");
}

TEST(sequence, fork_copies_tokens_and_progress_under_a_new_id) {
  sequence parent(1, iota_tokens(5), 16, 3, 0);
  parent.table().append(4);
  parent.add_computed_tokens(5);
  parent.count_preemption();
  sequence child = parent.fork(2, 7);
  EXPECT_EQ(child.id(), 2u);
  EXPECT_EQ(child.arrival(), 7u);
  EXPECT_EQ(child.priority(), 3);
  EXPECT_EQ(child.num_computed_tokens(), 5);
  EXPECT_EQ(child.table()[0], 4);
  EXPECT_EQ(child.num_preemptions(), 0);
  EXPECT_TRUE(std::ranges::equal(child.tokens(), parent.tokens()));
}

} // namespace
} // namespace kvactor
