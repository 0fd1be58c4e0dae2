// The split-K decision (cuda/attention_split.hpp): when decode attention
// splits a context across blocks, into how many chunks, and the scratch
// bound the CUDA device allocates once.
#include <gtest/gtest.h>

#include "kernels/cuda/attention_split.hpp"

namespace kvactor::kernels {
namespace {

constexpr int32_t h100_sms = 132;

TEST(attention_split, one_sequence_of_32k_fills_the_device) {
  // Llama-3-8B: 32 query heads over 8 KV heads, groups of 4: 8 blocks in one pass.
  const split_plan plan = plan_attention_split(1, 8, 32768, h100_sms);
  EXPECT_EQ(plan.num_splits, 32);
  EXPECT_EQ(plan.chunk, 1024);
  // One head group: as many chunks of the minimum as the context holds.
  const split_plan one = plan_attention_split(1, 1, 32768, h100_sms);
  EXPECT_EQ(one.num_splits, 64);
  EXPECT_EQ(one.chunk, split_min_chunk);
}

TEST(attention_split, no_split_when_the_grid_fills_the_sms_or_the_context_is_short) {
  EXPECT_EQ(plan_attention_split(33, 4, 32768, h100_sms).num_splits, 1);     // 132 blocks: every SM busy
  EXPECT_EQ(plan_attention_split(1, 8, 2 * split_min_chunk - 1, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 100, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 32768, 0).num_splits, 1);             // unknown device
  EXPECT_EQ(plan_attention_split(0, 8, 32768, h100_sms).num_splits, 1);      // empty batch
}

TEST(attention_split, the_threshold_in_context_and_in_batch) {
  EXPECT_EQ(plan_attention_split(1, 8, 2 * split_min_chunk - 1, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 2 * split_min_chunk, h100_sms).num_splits, 2);
  EXPECT_EQ(plan_attention_split(1, h100_sms, 8192, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, h100_sms - 1, 8192, h100_sms).num_splits, 2);
  // batch 16 of 8 groups (128 blocks) still splits in two; 17 (136) does not
  EXPECT_EQ(plan_attention_split(16, 8, 8192, h100_sms).num_splits, 2);
  EXPECT_EQ(plan_attention_split(17, 8, 8192, h100_sms).num_splits, 1);
}

// Every plan covers the context with whole tiles, no chunk under the
// minimum, at most split_blocks_per_sm blocks per SM, and scratch within the
// device's bound; contexts up to 2^31 keys stay in int32 chunks.
TEST(attention_split, every_plan_covers_the_context_within_the_bounds) {
  int num_split = 0;
  for (int32_t sms : {1, 20, 108, 132})
    for (int32_t seqs : {1, 2, 3, 7, 16, 64})
      for (int32_t groups : {1, 2, 8, 32})
        for (int64_t context : {int64_t{1}, int64_t{1023}, int64_t{1024}, int64_t{1025}, int64_t{5000},
                                int64_t{32768}, int64_t{131072}, int64_t{1} << 31}) {
          const split_plan plan = plan_attention_split(seqs, groups, context, sms);
          SCOPED_TRACE(testing::Message() << "sms " << sms << " seqs " << seqs << " groups " << groups << " context "
                                          << context << " -> " << plan.num_splits << " x " << plan.chunk);
          ASSERT_GE(plan.num_splits, 1);
          if (plan.num_splits == 1) continue;
          ++num_split;
          EXPECT_EQ(plan.chunk % split_tile, 0);
          EXPECT_GE(plan.chunk, split_min_chunk);
          EXPECT_GE(static_cast<int64_t>(plan.num_splits) * plan.chunk, context);
          EXPECT_LT(static_cast<int64_t>(plan.num_splits - 1) * plan.chunk, context);  // no split wholly past it
          EXPECT_LE(int64_t{seqs} * groups * plan.num_splits, int64_t{split_blocks_per_sm} * sms);
          EXPECT_LE(split_scratch_floats(seqs, groups * split_max_group, split_max_head_dim, plan.num_splits),
                    max_split_scratch_floats(sms));
        }
  EXPECT_GT(num_split, 100);
}

TEST(attention_split, scratch_sizes) {
  // out [rows, splits, head_dim] + m and l [rows, splits]
  EXPECT_EQ(split_scratch_floats(2, 32, 128, 4), 2 * 32 * 4 * 130);
  EXPECT_EQ(max_split_scratch_floats(132), 2 * 132 * 8 * 130);  // about 1 MiB
}

} // namespace
} // namespace kvactor::kernels
