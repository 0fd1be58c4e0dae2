#include "actors/core/token_list.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>

namespace kvactor {
namespace {

using ::testing::ElementsAre;

TEST(token_list, keeps_short_lists_inline_and_grows_onto_the_heap) {
  token_list a{7};
  EXPECT_EQ(a.size(), 1u);
  const token_id* inline_data = a.data();
  for (token_id t = 8; t < 11; ++t)
    a.push_back(t);
  EXPECT_EQ(a.data(), inline_data); // four fit inline
  a.push_back(11);
  EXPECT_NE(a.data(), inline_data);
  EXPECT_THAT(a, ElementsAre(7, 8, 9, 10, 11));
}

TEST(token_list, copies_moves_and_converts_like_a_vector) {
  const std::vector<token_id> v = {1, 2, 3, 4, 5, 6};
  token_list heap = v;
  token_list small(v.begin(), v.begin() + 2);
  token_list copy = heap;
  token_list moved = std::move(heap);
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(copy, moved);
  EXPECT_THAT(moved, ElementsAre(1, 2, 3, 4, 5, 6));
  small = moved;
  EXPECT_THAT(small, ElementsAre(1, 2, 3, 4, 5, 6));
  moved = token_list{9};
  EXPECT_THAT(moved, ElementsAre(9));
  std::span<const token_id> view = moved;
  EXPECT_EQ(view.size(), 1u);
}

TEST(token_list, inserts_where_it_is_told) {
  token_list a{1, 3};
  a.insert(a.begin() + 1, 2);
  auto it = std::inserter(a, a.end());
  *it++ = 4;
  *it++ = 5;
  EXPECT_THAT(a, ElementsAre(1, 2, 3, 4, 5));
}

} // namespace
} // namespace kvactor
