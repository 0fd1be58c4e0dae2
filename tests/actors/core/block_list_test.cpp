#include "actors/core/block_list.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::ElementsAre;

TEST(block_list, keeps_insertion_order_and_removes_from_the_middle) {
  block_list list(6);
  for (block_id b : {4, 1, 5, 0})
    list.push_back(b);
  EXPECT_EQ(list.size(), 4);
  EXPECT_THAT(list.to_vector(), ElementsAre(4, 1, 5, 0));
  list.remove(5);
  EXPECT_FALSE(list.contains(5));
  EXPECT_THAT(list.to_vector(), ElementsAre(4, 1, 0));
  EXPECT_EQ(list.pop_front(), 4);
  list.remove(0);
  EXPECT_THAT(list.to_vector(), ElementsAre(1));
  list.push_back(5);
  EXPECT_THAT(list.to_vector(), ElementsAre(1, 5));
  EXPECT_EQ(list.pop_front(), 1);
  EXPECT_EQ(list.pop_front(), 5);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.front(), no_block);
}

TEST(block_list_death, rejects_double_insertion) {
  block_list list(2);
  list.push_back(1);
  EXPECT_DEATH(list.push_back(1), "already in this list");
}

} // namespace
} // namespace kvactor
