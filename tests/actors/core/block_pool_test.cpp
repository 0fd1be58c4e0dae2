#include "actors/core/block_pool.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

namespace kvactor {
namespace {

using ::testing::ElementsAre;

constexpr int32_t bs = 4;

std::vector<token_id> block_tokens(token_id first) {
  std::vector<token_id> v(bs);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(block_pool, allocates_in_id_order_all_or_nothing) {
  block_pool pool(4, bs);
  EXPECT_THAT(*pool.allocate(3), ElementsAre(0, 1, 2));
  EXPECT_FALSE(pool.allocate(2).has_value());
  EXPECT_EQ(pool.num_available_blocks(), 1);
  EXPECT_THAT(*pool.allocate(1), ElementsAre(3));
  EXPECT_FALSE(pool.can_allocate(1));
  EXPECT_EQ(pool.num_used_blocks(), 4);
}

TEST(block_pool, counts_references_and_frees_at_zero) {
  block_pool pool(2, bs);
  block_id b = pool.allocate(1)->front();
  pool.retain(b);
  EXPECT_EQ(pool.ref_count(b), 2);
  pool.release(b);
  EXPECT_EQ(pool.num_free_blocks(), 1);
  pool.release(b);
  EXPECT_EQ(pool.ref_count(b), 0);
  EXPECT_THAT(pool.free_order(), ElementsAre(1, 0));
}

TEST(block_pool, keeps_released_hashed_blocks_for_lookup) {
  block_pool pool(3, bs);
  block_id b = pool.allocate(1)->front();
  ASSERT_TRUE(pool.cache(b, 11, 0, block_tokens(0)));
  pool.release(b);
  EXPECT_EQ(pool.num_cached_free_blocks(), 1);
  EXPECT_EQ(pool.lookup(11, 0, block_tokens(0)), b);
  pool.retain(b); // a hit revives it
  EXPECT_EQ(pool.ref_count(b), 1);
  EXPECT_EQ(pool.num_cached_free_blocks(), 0);
}

TEST(block_pool, lookup_verifies_tokens_and_parent) {
  block_pool pool(2, bs);
  block_id b = pool.allocate(1)->front();
  pool.cache(b, 11, 5, block_tokens(0));
  EXPECT_FALSE(pool.lookup(11, 5, block_tokens(1)).has_value()); // hash collision
  EXPECT_FALSE(pool.lookup(11, 6, block_tokens(0)).has_value()); // other prefix
  EXPECT_FALSE(pool.lookup(12, 5, block_tokens(0)).has_value());
  EXPECT_EQ(pool.lookup(11, 5, block_tokens(0)), b);
}

TEST(block_pool, refuses_a_second_block_under_a_cached_key) {
  block_pool pool(2, bs);
  auto blocks = *pool.allocate(2);
  EXPECT_TRUE(pool.cache(blocks[0], 11, 0, block_tokens(0)));
  EXPECT_FALSE(pool.cache(blocks[1], 11, 0, block_tokens(0)));
  EXPECT_FALSE(pool.is_hashed(blocks[1]));
  pool.release(blocks[1]);
  EXPECT_TRUE(pool.is_free(blocks[1]));
}

TEST(block_pool, takes_free_blocks_before_evicting_the_oldest_cached) {
  block_pool pool(4, bs);
  auto blocks = *pool.allocate(4);
  for (int i = 0; i < 3; ++i)
    pool.cache(blocks[i], 100 + i, 0, block_tokens(i));
  // Released back to front: 3 (unhashed, free), then 2, 1, 0 into the LRU.
  pool.release(blocks);
  EXPECT_THAT(pool.free_order(), ElementsAre(3));
  EXPECT_THAT(pool.eviction_order(), ElementsAre(2, 1, 0));
  EXPECT_THAT(*pool.allocate(2), ElementsAre(3, 2));
  EXPECT_EQ(pool.num_evictions(), 1);
  EXPECT_FALSE(pool.lookup(102, 0, block_tokens(2)).has_value());
  EXPECT_EQ(pool.lookup(101, 0, block_tokens(1)), 1);
}

TEST(block_pool, failed_allocation_changes_nothing) {
  block_pool pool(3, bs);
  auto blocks = *pool.allocate(3);
  pool.cache(blocks[0], 7, 0, block_tokens(0));
  pool.cache(blocks[1], 8, 7, block_tokens(4));
  pool.retain(blocks[2]);
  pool.release(blocks[1]);
  pool.release(blocks[0]);
  const auto lru = pool.eviction_order();
  EXPECT_FALSE(pool.allocate(3).has_value());
  EXPECT_EQ(pool.eviction_order(), lru);
  EXPECT_EQ(pool.ref_count(blocks[2]), 2);
  EXPECT_EQ(pool.num_evictions(), 0);
  EXPECT_EQ(pool.lookup(7, 0, block_tokens(0)), blocks[0]);
}

TEST(block_pool_death, rejects_misuse) {
  block_pool pool(2, bs);
  EXPECT_DEATH(pool.release(0), "release of a block nobody holds");
  EXPECT_DEATH(pool.retain(1), "retain of a free, uncached block");
  block_id b = pool.allocate(1)->front();
  EXPECT_DEATH(pool.cache(b, 1, 0, std::vector<token_id>{1}), "only full blocks are cached");
}

} // namespace
} // namespace kvactor
