#include "actors/core/kv_ledger.hpp"

#include "sequence_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using namespace kvactor::testing;

constexpr int32_t bs = 4;

TEST(kv_ledger, grants_in_order_until_an_entry_does_not_fit) {
  kv_ledger ledger(5, bs);
  auto r = ledger.reserve({{1, token_run(8), 0, 8}, {2, token_run(14, 50), 0, 14},
                           {3, token_run(2, 90), 0, 2}});
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].blocks, (table_delta{0, {0, 1}})); // a new table
  EXPECT_EQ(r.granted[0].start, 0);
  EXPECT_EQ(r.granted[0].num_new_tokens, 8);
  EXPECT_EQ(r.denied, 1);
  EXPECT_EQ(r.num_blocks_short, 1); // 4 needed, 3 available
  EXPECT_EQ(ledger.num_sequences(), 2); // the third was never looked at
  EXPECT_EQ(ledger.blocks().pool().num_used_blocks(), 2);
  EXPECT_THAT(ledger.check_invariants(), IsEmpty());
}

TEST(kv_ledger, follows_the_schedulers_tokens_and_progress) {
  kv_ledger ledger(8, bs);
  ledger.reserve({{1, token_run(6), 0, 6}});
  // Next step: the sampled token arrives, the prompt's K/V are computed.
  auto r = ledger.reserve({{1, {100}, 6, 1}});
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].start, 6);
  EXPECT_EQ(r.granted[0].blocks, (table_delta{2, {}})); // both blocks kept, none added
  EXPECT_EQ(ledger.blocks().pool().num_hashed_blocks(), 1); // the full first block
}

TEST(kv_ledger, grants_only_the_blocks_added_since_the_last_grant) {
  kv_ledger ledger(8, bs);
  auto r = ledger.reserve({{1, token_run(3), 0, 3}, {2, token_run(5, 40), 0, 5}});
  EXPECT_EQ(r.granted[0].blocks, (table_delta{0, {0}}));
  EXPECT_EQ(r.granted[1].blocks, (table_delta{0, {1, 2}}));
  r = ledger.reserve({{1, {7}, 3, 1}, {2, {8}, 5, 1}}); // 1 fills block 0; 2 stays in block 2
  EXPECT_EQ(r.granted[0].blocks, (table_delta{1, {}}));
  EXPECT_EQ(r.granted[1].blocks, (table_delta{2, {}}));
  r = ledger.reserve({{1, {9}, 4, 1}}); // token 4 opens block 1 of sequence 1
  EXPECT_EQ(r.granted[0].blocks, (table_delta{1, {3}}));
  EXPECT_THAT(ledger.blocks_of(1), ElementsAre(0, 3));
  // Chunks of a prefill: each grant adds the blocks of its chunk.
  r = ledger.reserve({{3, token_run(12, 80), 0, 5}});
  EXPECT_EQ(r.granted[0].blocks, (table_delta{0, {4, 5}}));
  r = ledger.reserve({{3, {}, 5, 7}});
  EXPECT_EQ(r.granted[0].blocks, (table_delta{2, {6}}));
}

TEST(kv_ledger, ended_sequences_leave_their_full_blocks_for_prefix_hits) {
  kv_ledger ledger(8, bs);
  ledger.reserve({{1, token_run(9), 0, 9}});
  ledger.forget(1, 9);
  EXPECT_EQ(ledger.num_sequences(), 0);
  EXPECT_EQ(ledger.blocks().pool().num_used_blocks(), 0);
  auto r = ledger.reserve({{2, concat(token_run(8), token_run(3, 70)), 0, 11}});
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].num_cached_tokens, 8);
  EXPECT_EQ(r.granted[0].start, 8);
  EXPECT_EQ(r.granted[0].num_new_tokens, 3); // capped by what is left
}

TEST(kv_ledger, without_prefix_caching_nothing_is_reused_or_kept) {
  kv_ledger ledger(8, bs, /*prefix_caching=*/false);
  ledger.reserve({{1, token_run(9), 0, 9}});
  ledger.forget(1, 9);
  EXPECT_EQ(ledger.blocks().pool().num_hashed_blocks(), 0);
  EXPECT_EQ(ledger.blocks().pool().num_cached_free_blocks(), 0);
  auto r = ledger.reserve({{2, concat(token_run(8), token_run(3, 70)), 0, 11}});
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].num_cached_tokens, 0);
  EXPECT_EQ(r.granted[0].start, 0);
  EXPECT_EQ(r.granted[0].num_new_tokens, 11);
  EXPECT_THAT(ledger.check_invariants(), IsEmpty());
}

TEST(kv_ledger, recompute_release_caches_then_drops_progress) {
  kv_ledger ledger(8, bs);
  ledger.reserve({{1, token_run(9), 0, 9}});
  ledger.release(1, 9);
  EXPECT_EQ(ledger.blocks().pool().num_used_blocks(), 0);
  auto r = ledger.reserve({{1, {}, 0, 9}}); // prefilled again from scratch
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].start, 8); // its own blocks come back from the cache
  // The table starts over: the two cached blocks, then a fresh one for token 8
  // (block 2, released unhashed, went to the back of the free list).
  EXPECT_EQ(r.granted[0].blocks, (table_delta{0, {0, 1, 3}}));
}

TEST(kv_ledger, swaps_keep_progress_and_refuse_when_short) {
  kv_ledger ledger(4, bs);
  ledger.reserve({{1, token_run(8), 0, 8}});
  EXPECT_THAT(ledger.blocks_of(1), ElementsAre(0, 1));
  ledger.release_swapped(1);
  ledger.reserve({{2, token_run(12, 40), 0, 12}});
  EXPECT_FALSE(ledger.allocate_for_swap_in(1, 2).has_value());
  ledger.forget(2, 12);
  auto table = ledger.allocate_for_swap_in(1, 2);
  ASSERT_TRUE(table.has_value());
  EXPECT_THAT(*table, ElementsAre(0, 1)); // the free block, then the oldest cached one
  auto r = ledger.reserve({{1, {5}, 8, 1}}); // decoding goes on from token 8
  ASSERT_EQ(r.granted.size(), 1u);
  EXPECT_EQ(r.granted[0].start, 8);
  // The executor still holds the blocks before the swap: the table starts
  // over with the swapped-in blocks and the one token 8 needs.
  EXPECT_EQ(r.granted[0].blocks, (table_delta{0, {0, 1, 3}}));
  EXPECT_THAT(ledger.check_invariants(), IsEmpty());
}

} // namespace
} // namespace kvactor
