#include "actors/core/block_allocator.hpp"

#include "actors/core/pool_invariants.hpp"
#include "actors/core/swap_space.hpp"
#include "sequence_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace kvactor::testing;

constexpr int32_t bs = 16;

void expect_sound(const block_allocator& mgr, std::vector<const block_table*> tables) {
  EXPECT_THAT(check_invariants(mgr.pool(), tables), IsEmpty());
}

TEST(block_allocator, prompt_of_55_tokens_takes_4_blocks_and_hashes_3) {
  block_allocator mgr(8, bs);
  kv_sequence a(1, token_run(55), bs);
  ASSERT_TRUE(prefill(mgr, a));
  EXPECT_THAT(a.table().blocks(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(a.num_computed_tokens(), 55);
  EXPECT_TRUE(mgr.pool().is_hashed(0) && mgr.pool().is_hashed(1) && mgr.pool().is_hashed(2));
  EXPECT_FALSE(mgr.pool().is_hashed(3));
  EXPECT_EQ(mgr.pool().num_hashed_blocks(), 3);
}

TEST(block_allocator, shared_prefix_hits_cached_blocks_and_lru_evicts_oldest_first) {
  block_allocator mgr(8, bs);
  kv_sequence a(1, token_run(55), bs);
  ASSERT_TRUE(prefill(mgr, a));

  // Same first 48 tokens, then different ones: 3 hits and 1 new block.
  kv_sequence b(2, concat(token_run(48), token_run(12, 1000)), bs);
  auto hit = mgr.find_cached_prefix(b);
  EXPECT_THAT(hit.blocks, ElementsAre(0, 1, 2));
  EXPECT_EQ(hit.num_queried_blocks, 3);
  EXPECT_EQ(mgr.num_blocks_needed(b, 12, &hit), 1);
  ASSERT_TRUE(mgr.allocate_slots(b, 12, &hit));
  EXPECT_THAT(b.table().blocks(), ElementsAre(0, 1, 2, 4));
  EXPECT_EQ(b.num_computed_tokens(), 48);
  EXPECT_EQ(mgr.pool().ref_count(0), 2);
  b.add_computed_tokens(12);
  mgr.cache_computed_blocks(b);
  expect_sound(mgr, {&a.table(), &b.table()});

  mgr.free(a);
  mgr.free(b);
  EXPECT_THAT(mgr.pool().free_order(), ElementsAre(5, 6, 7, 3, 4));
  EXPECT_THAT(mgr.pool().eviction_order(), ElementsAre(2, 1, 0));

  // An unrelated prompt that needs every block evicts the LRU cached blocks last.
  kv_sequence c(3, token_run(128, 5000), bs);
  ASSERT_TRUE(prefill(mgr, c));
  EXPECT_THAT(c.table().blocks(), ElementsAre(5, 6, 7, 3, 4, 2, 1, 0));
  EXPECT_EQ(mgr.pool().num_evictions(), 3);
  auto f = mgr.figures();
  EXPECT_EQ(f.num_prefix_queries, 3 + 3 + 7);
  EXPECT_EQ(f.num_prefix_hits, 3);
  expect_sound(mgr, {&c.table()});
}

TEST(block_allocator, partial_eviction_keeps_the_most_recent_prefix_blocks) {
  block_allocator mgr(8, bs);
  kv_sequence a(1, token_run(55), bs);
  ASSERT_TRUE(prefill(mgr, a));
  mgr.free(a); // free [4,5,6,7,3], cached LRU [2,1,0]
  kv_sequence c(2, token_run(80, 5000), bs);
  ASSERT_TRUE(prefill(mgr, c));
  EXPECT_THAT(c.table().blocks(), ElementsAre(4, 5, 6, 7, 3));
  kv_sequence c2(3, token_run(16, 9000), bs);
  ASSERT_TRUE(prefill(mgr, c2));
  EXPECT_THAT(c2.table().blocks(), ElementsAre(2)); // the tail block went first
  kv_sequence d(4, token_run(40), bs);
  auto hit = mgr.find_cached_prefix(d);
  EXPECT_THAT(hit.blocks, ElementsAre(0, 1));
}

TEST(block_allocator, never_serves_the_last_token_from_the_cache) {
  block_allocator mgr(8, bs);
  kv_sequence a(1, token_run(48), bs);
  ASSERT_TRUE(prefill(mgr, a));
  kv_sequence b(2, token_run(48), bs);
  auto hit = mgr.find_cached_prefix(b);
  EXPECT_THAT(hit.blocks, ElementsAre(0, 1)); // block 2 holds the last token
  ASSERT_TRUE(mgr.allocate_slots(b, 16, &hit));
  EXPECT_THAT(b.table().blocks(), ElementsAre(0, 1, 3));
}

TEST(block_allocator, failed_allocation_leaves_pool_and_sequence_untouched) {
  block_allocator mgr(4, bs);
  kv_sequence a(1, token_run(33), bs);
  ASSERT_TRUE(prefill(mgr, a));
  mgr.free(a);
  const auto free_order = mgr.pool().free_order();
  const auto lru = mgr.pool().eviction_order();
  EXPECT_THAT(lru, ElementsAre(1, 0));

  kv_sequence b(2, concat(token_run(32), token_run(40, 700)), bs); // needs 5 blocks
  auto hit = mgr.find_cached_prefix(b);
  ASSERT_EQ(hit.blocks.size(), 2u);
  EXPECT_EQ(mgr.num_blocks_needed(b, 40, &hit), 5); // 3 new + 2 revived
  EXPECT_FALSE(mgr.allocate_slots(b, 40, &hit).has_value());
  EXPECT_TRUE(b.table().empty());
  EXPECT_EQ(b.num_computed_tokens(), 0);
  EXPECT_EQ(mgr.pool().free_order(), free_order);
  EXPECT_EQ(mgr.pool().eviction_order(), lru);
  EXPECT_EQ(mgr.pool().ref_count(0), 0);
  EXPECT_EQ(mgr.figures().num_prefix_queries, 2);
  expect_sound(mgr, {&b.table()});
}

TEST(block_allocator, decode_allocates_a_block_only_at_a_boundary) {
  block_allocator mgr(8, bs);
  kv_sequence seq(1, token_run(14), bs);
  ASSERT_TRUE(prefill(mgr, seq));
  for (token_id t = 100; seq.num_tokens() < 50; ++t) {
    seq.append_token(t);
    const int32_t blocks_before = seq.table().num_blocks();
    const bool boundary = seq.num_computed_tokens() % bs == 0;
    ASSERT_TRUE(compute(mgr, seq, 1));
    EXPECT_EQ(seq.table().num_blocks(), blocks_before + (boundary ? 1 : 0));
  }
  EXPECT_EQ(seq.table().num_blocks(), 4);
}

TEST(block_allocator, fork_shares_blocks_and_copies_on_first_write) {
  block_allocator mgr(8, bs);
  kv_sequence parent(1, token_run(20), bs);
  ASSERT_TRUE(prefill(mgr, parent));
  kv_sequence child = mgr.fork(parent, 2);
  EXPECT_THAT(child.table().blocks(), ElementsAre(0, 1));
  EXPECT_EQ(mgr.pool().ref_count(1), 2);
  expect_sound(mgr, {&parent.table(), &child.table()});

  parent.append_token(500);
  auto copies = compute(mgr, parent, 1);
  ASSERT_TRUE(copies);
  EXPECT_THAT(*copies, ElementsAre(block_copy{1, 2}));
  EXPECT_THAT(parent.table().blocks(), ElementsAre(0, 2));
  EXPECT_EQ(mgr.pool().ref_count(1), 1);
  EXPECT_EQ(mgr.pool().ref_count(0), 2); // the full first block stays shared

  child.append_token(600);
  auto child_copies = compute(mgr, child, 1);
  ASSERT_TRUE(child_copies);
  EXPECT_THAT(*child_copies, IsEmpty()); // now the only holder: writes in place
  EXPECT_THAT(child.table().blocks(), ElementsAre(0, 1));
  expect_sound(mgr, {&parent.table(), &child.table()});
}

TEST(block_allocator, copy_on_write_counts_towards_the_need) {
  block_allocator mgr(2, bs);
  kv_sequence parent(1, token_run(20), bs);
  ASSERT_TRUE(prefill(mgr, parent));
  kv_sequence child = mgr.fork(parent, 2);
  parent.append_token(7);
  EXPECT_EQ(mgr.num_blocks_needed(parent, 1), 1);
  EXPECT_FALSE(mgr.can_allocate_slots(parent, 1));
  EXPECT_FALSE(compute(mgr, parent, 1).has_value());
  EXPECT_THAT(parent.table().blocks(), ElementsAre(0, 1));
  EXPECT_EQ(mgr.pool().ref_count(1), 2);
}

TEST(block_allocator, swap_out_and_in_moves_kv_through_the_host_pool) {
  block_allocator mgr(6, bs);
  swap_space host(4);
  kv_sequence seq(1, token_run(40), bs);
  ASSERT_TRUE(prefill(mgr, seq));

  auto out = host.swap_out(seq.id(), seq.table().blocks());
  ASSERT_TRUE(out);
  EXPECT_THAT(*out, ElementsAre(block_copy{0, 0}, block_copy{1, 1}, block_copy{2, 2}));
  mgr.free(seq); // after the copy's completion event
  EXPECT_EQ(seq.num_computed_tokens(), 40);
  EXPECT_EQ(mgr.pool().num_used_blocks(), 0);

  kv_sequence other(2, token_run(40, 300), bs); // takes the free blocks meanwhile
  ASSERT_TRUE(prefill(mgr, other));
  ASSERT_TRUE(mgr.allocate_for_swap_in(seq, 3));
  // The free block 2 first, then the cached 1 and 0 are evicted, oldest first.
  EXPECT_THAT(seq.table().blocks(), ElementsAre(2, 1, 0));
  auto in = host.swap_in(seq.id(), seq.table().blocks());
  EXPECT_THAT(in, ElementsAre(block_copy{0, 2}, block_copy{1, 1}, block_copy{2, 0}));
  host.release(seq.id());
  EXPECT_THAT(check_invariants(host), IsEmpty());
  expect_sound(mgr, {&seq.table(), &other.table()});

  seq.append_token(9);
  ASSERT_TRUE(compute(mgr, seq, 1)); // decoding goes on from the restored KV
  EXPECT_EQ(seq.num_computed_tokens(), 41);
}

TEST(block_allocator, swap_in_refused_when_the_device_pool_is_short) {
  block_allocator mgr(2, bs);
  kv_sequence seq(1, token_run(40), bs);
  EXPECT_FALSE(mgr.allocate_for_swap_in(seq, 3));
  EXPECT_TRUE(seq.table().empty());
  EXPECT_EQ(mgr.pool().num_free_blocks(), 2);
}

TEST(block_allocator, recompute_after_preemption_reuses_cached_blocks) {
  block_allocator mgr(8, bs);
  kv_sequence seq(1, token_run(40), bs);
  ASSERT_TRUE(prefill(mgr, seq));
  seq.append_token(77);
  mgr.free(seq);
  seq.reset_computed();
  auto hit = mgr.find_cached_prefix(seq);
  EXPECT_THAT(hit.blocks, ElementsAre(0, 1)); // 41 tokens: blocks 0 and 1 are full
  ASSERT_TRUE(prefill(mgr, seq));
  EXPECT_EQ(seq.num_computed_tokens(), 41);
  expect_sound(mgr, {&seq.table()});
}

} // namespace
} // namespace kvactor
