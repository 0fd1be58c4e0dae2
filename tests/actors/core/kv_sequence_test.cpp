#include "actors/core/kv_sequence.hpp"

#include "actors/core/block_hash.hpp"
#include "sequence_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kvactor {
namespace {

using testing::token_run;

TEST(kv_sequence, chains_block_hashes_over_full_blocks_as_tokens_arrive) {
  kv_sequence seq(1, token_run(31), 16);
  ASSERT_EQ(seq.block_hashes().size(), 1u);
  auto tokens = seq.tokens();
  EXPECT_EQ(seq.block_hashes()[0], hash_block(root_block_hash, tokens.subspan(0, 16)));
  seq.append_token(99);
  ASSERT_EQ(seq.block_hashes().size(), 2u);
  EXPECT_EQ(seq.block_hashes()[1], hash_block(seq.block_hashes()[0], seq.tokens().subspan(16, 16)));
  EXPECT_EQ(seq.parent_hash(1), seq.block_hashes()[0]);
}

TEST(kv_sequence, equal_blocks_after_different_prefixes_hash_differently) {
  auto a = token_run(32);
  auto b = a;
  b[0] = 1000;
  kv_sequence sa(1, a, 16), sb(2, b, 16);
  EXPECT_NE(sa.block_hashes()[1], sb.block_hashes()[1]);
}

TEST(kv_sequence_death, computed_tokens_need_slots) {
  kv_sequence seq(1, token_run(4), 16);
  EXPECT_DEATH(seq.add_computed_tokens(1), "computed tokens without slots");
  seq.table().append(0);
  seq.add_computed_tokens(4);
  EXPECT_EQ(seq.num_uncomputed_tokens(), 0);
  EXPECT_DEATH(seq.add_computed_tokens(1), "computed tokens beyond the sequence");
}

TEST(kv_sequence, fork_copies_tokens_progress_and_table_under_a_new_id) {
  kv_sequence parent(1, token_run(20), 16);
  parent.table().append(4);
  parent.table().append(6);
  parent.add_computed_tokens(20);
  parent.set_num_cached_blocks(1);
  kv_sequence child = parent.fork(2);
  EXPECT_EQ(child.id(), 2u);
  EXPECT_EQ(child.num_computed_tokens(), 20);
  EXPECT_EQ(child.num_cached_blocks(), 1);
  EXPECT_TRUE(std::ranges::equal(child.table().blocks(), parent.table().blocks()));
  EXPECT_TRUE(std::ranges::equal(child.block_hashes(), parent.block_hashes()));
  EXPECT_TRUE(std::ranges::equal(child.tokens(), parent.tokens()));
}

TEST(kv_sequence_death, resets_progress_only_without_blocks) {
  kv_sequence seq(1, token_run(4), 16);
  seq.table().append(0);
  seq.add_computed_tokens(4);
  EXPECT_DEATH(seq.reset_computed(), "reset with blocks still held");
  seq.table().clear();
  seq.reset_computed();
  EXPECT_EQ(seq.num_computed_tokens(), 0);
}

} // namespace
} // namespace kvactor
