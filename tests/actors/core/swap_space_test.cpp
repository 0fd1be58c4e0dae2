#include "actors/core/swap_space.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::ElementsAre;

TEST(swap_space, maps_device_blocks_to_host_blocks_and_back) {
  swap_space space(4);
  auto out = space.swap_out(7, std::vector<block_id>{12, 3, 40});
  ASSERT_TRUE(out.has_value());
  EXPECT_THAT(*out, ElementsAre(block_copy{12, 0}, block_copy{3, 1}, block_copy{40, 2}));
  EXPECT_TRUE(space.holds(7));
  EXPECT_EQ(space.num_free_blocks(), 1);
  EXPECT_THAT(space.swap_in(7, std::vector<block_id>{5, 6, 9}),
              ElementsAre(block_copy{0, 5}, block_copy{1, 6}, block_copy{2, 9}));
  space.release(7);
  EXPECT_FALSE(space.holds(7));
  EXPECT_EQ(space.num_free_blocks(), 4);
}

TEST(swap_space, refuses_a_sequence_that_does_not_fit_and_changes_nothing) {
  swap_space space(3);
  ASSERT_TRUE(space.swap_out(1, std::vector<block_id>{0, 1}).has_value());
  EXPECT_FALSE(space.can_swap_out(2));
  EXPECT_FALSE(space.swap_out(2, std::vector<block_id>{2, 3}).has_value());
  EXPECT_FALSE(space.holds(2));
  EXPECT_EQ(space.num_free_blocks(), 1);
  EXPECT_TRUE(space.swap_out(3, std::vector<block_id>{9}).has_value());
  EXPECT_EQ(space.num_sequences(), 2);
}

TEST(swap_space, reuses_released_host_blocks) {
  swap_space space(2);
  space.swap_out(1, std::vector<block_id>{0, 1});
  space.release(1);
  auto again = space.swap_out(2, std::vector<block_id>{8, 9});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(space.num_free_blocks(), 0);
}

TEST(swap_space_death, rejects_misuse) {
  swap_space space(4);
  space.swap_out(1, std::vector<block_id>{0, 1});
  EXPECT_DEATH(space.swap_out(1, std::vector<block_id>{2}), "already swapped out");
  EXPECT_DEATH(space.swap_in(1, std::vector<block_id>{5}), "different block count");
  EXPECT_DEATH(space.release(2), "not in swap space");
}

} // namespace
} // namespace kvactor
