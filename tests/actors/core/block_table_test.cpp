#include "actors/core/block_table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

TEST(block_table, counts_new_blocks_only_at_block_boundaries) {
  block_table table(16);
  EXPECT_EQ(table.num_new_blocks_for(1), 1);
  table.append(0);
  EXPECT_EQ(table.num_new_blocks_for(16), 0);
  EXPECT_EQ(table.num_new_blocks_for(17), 1);
  EXPECT_EQ(table.num_new_blocks_for(33), 2);
  EXPECT_EQ(table.num_blocks_for(0), 0);
  EXPECT_EQ(table.num_blocks_for(55), 4);
}

TEST(block_table, applies_table_deltas) {
  block_table table(16);
  table.apply({0, {5, 6}}); // a new table
  table.apply({2, {}});     // a decode step within the last block
  table.apply({2, {9}});    // a decode step into a new block
  EXPECT_THAT(table.blocks(), ::testing::ElementsAre(5, 6, 9));
  table.apply({1, {4, 9}}); // copy-on-write of block 1: the rest sent again
  EXPECT_THAT(table.blocks(), ::testing::ElementsAre(5, 4, 9));
  table.apply({0, {7}});    // starts over (swap-in, recompute)
  EXPECT_THAT(table.blocks(), ::testing::ElementsAre(7));
  EXPECT_TRUE((table_delta{0, {7}}).resets());
  EXPECT_FALSE((table_delta{1, {}}).resets());
}

TEST(block_table_death, rejects_a_delta_that_keeps_more_than_it_has) {
  block_table table(16);
  table.append(3);
  EXPECT_DEATH(table.apply({2, {4}}), "keeps more blocks than the table has");
}

} // namespace
} // namespace kvactor
