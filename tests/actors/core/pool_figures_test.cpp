#include "actors/core/pool_figures.hpp"

#include "sequence_builder.hpp"

#include <gtest/gtest.h>

namespace kvactor {
namespace {

using namespace kvactor::testing;

constexpr int32_t bs = 16;

TEST(pool_figures, reports_blocks_slots_sharing_and_prefix_hits) {
  block_allocator mgr(10, bs);
  kv_sequence a(1, token_run(40), bs); // 3 blocks, 40 of 48 slots
  ASSERT_TRUE(prefill(mgr, a));
  kv_sequence b(2, token_run(20), bs); // hits block 0, adds 1 block with 4 slots
  ASSERT_TRUE(prefill(mgr, b));

  auto f = mgr.figures();
  EXPECT_EQ(f.num_blocks, 10);
  EXPECT_EQ(f.num_used_blocks, 4);
  EXPECT_EQ(f.num_free_blocks, 6);
  EXPECT_EQ(f.num_cached_blocks, 0);
  EXPECT_EQ(f.num_allocated_slots, 64);
  EXPECT_EQ(f.num_used_slots, 16 + 16 + 8 + 4);
  EXPECT_DOUBLE_EQ(f.kv_utilisation(), 44.0 / 64.0);
  EXPECT_EQ(f.num_block_refs, 5);
  EXPECT_DOUBLE_EQ(f.sharing_ratio(), 5.0 / 4.0);
  EXPECT_EQ(f.num_prefix_queries, 2 + 1);
  EXPECT_EQ(f.num_prefix_hits, 1);
  EXPECT_DOUBLE_EQ(f.prefix_hit_rate(), 1.0 / 3.0);

  mgr.free(a);
  mgr.free(b);
  f = mgr.figures();
  EXPECT_EQ(f.num_used_blocks, 0);
  EXPECT_EQ(f.num_cached_blocks, 2);
  EXPECT_DOUBLE_EQ(f.kv_utilisation(), 1.0);
  EXPECT_NE(to_string(f).find("cached 2"), std::string::npos);
}

} // namespace
} // namespace kvactor
