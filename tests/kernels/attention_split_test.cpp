// The split-K decision (cuda/attention_split.hpp): when decode attention
// splits a context across blocks, into how many chunks, and the scratch
// bound the CUDA device allocates once.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/attention_split.hpp"
#if KVACTOR_HAVE_CUDA
#include "kernels/cuda/launch.hpp"
#endif

namespace kvactor::kernels {
namespace {

constexpr int32_t h100_sms = 132;

TEST(cuda_attention_split, one_sequence_of_32k_fills_the_device) {
  // Llama-3-8B: 32 query heads over 8 KV heads, groups of 4: 8 blocks in one pass.
  const split_plan plan = plan_attention_split(1, 8, 32768, h100_sms);
  EXPECT_EQ(plan.num_splits, 32);
  EXPECT_EQ(plan.chunk, 1024);
  // One head group: as many chunks of the minimum as the context holds.
  const split_plan one = plan_attention_split(1, 1, 32768, h100_sms);
  EXPECT_EQ(one.num_splits, 32768 / split_min_chunk);
  EXPECT_EQ(one.chunk, split_min_chunk);
}

TEST(cuda_attention_split, no_split_when_the_grid_fills_the_sms_or_the_context_is_short) {
  // 132 blocks: every SM busy
  EXPECT_EQ(plan_attention_split(33, 4, 32768, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 2 * split_min_chunk - 1, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 100, h100_sms).num_splits, 1);
  EXPECT_EQ(plan_attention_split(1, 8, 32768, 0).num_splits, 1);             // unknown device
  EXPECT_EQ(plan_attention_split(0, 8, 32768, h100_sms).num_splits, 1);      // empty batch
}

TEST(cuda_attention_split, the_threshold_in_context_and_in_batch) {
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
TEST(cuda_attention_split, every_plan_covers_the_context_within_the_bounds) {
  int num_split = 0;
  for (int32_t sms : {1, 20, 108, 132})
    for (int32_t seqs : {1, 2, 3, 7, 16, 64})
      for (int32_t groups : {1, 2, 8, 32})
        for (int64_t context : {int64_t{1}, int64_t{1023}, int64_t{1024}, int64_t{1025},
                                int64_t{5000}, int64_t{32768}, int64_t{131072}, int64_t{1} << 31}) {
          const split_plan plan = plan_attention_split(seqs, groups, context, sms);
          SCOPED_TRACE(testing::Message()
                       << "sms " << sms << " seqs " << seqs << " groups " << groups << " context "
                       << context << " -> " << plan.num_splits << " x " << plan.chunk);
          ASSERT_GE(plan.num_splits, 1);
          if (plan.num_splits == 1) continue;
          ++num_split;
          EXPECT_EQ(plan.chunk % split_tile, 0);
          EXPECT_GE(plan.chunk, split_min_chunk);
          EXPECT_GE(static_cast<int64_t>(plan.num_splits) * plan.chunk, context);
          // no split wholly past it
          EXPECT_LT(static_cast<int64_t>(plan.num_splits - 1) * plan.chunk, context);
          EXPECT_LE(int64_t{seqs} * groups * plan.num_splits, int64_t{split_blocks_per_sm} * sms);
          EXPECT_LE(split_scratch_floats(seqs, groups * split_max_group, split_max_head_dim,
                                         plan.num_splits),
                    max_split_scratch_floats(sms));
        }
  EXPECT_GT(num_split, 100);
}

TEST(cuda_attention_split, scratch_sizes) {
  // out [rows, splits, head_dim] + m and l [rows, splits]
  EXPECT_EQ(split_scratch_floats(2, 32, 128, 4), 2 * 32 * 4 * 130);
  EXPECT_EQ(max_split_scratch_floats(132), 2 * 132 * 8 * 130);  // about 1 MiB
}

#if KVACTOR_HAVE_CUDA
// The launcher's use of the plan (host code of kernels.cu; no GPU needed):
// Llama-3-8B heads, decode at 32k keys, on the device's SMs.
TEST(cuda_attention_split, the_launcher_splits_decode_only_with_a_large_enough_workspace) {
  std::vector<float> scratch(static_cast<size_t>(max_split_scratch_floats(h100_sms)));
  paged_attention_params p{};
  p.num_seqs = p.num_tokens = 1;
  p.num_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.block_size = 16;
  p.max_blocks_per_seq = 2048;
  EXPECT_EQ(cuda_launch::attention_split_of(p).num_splits, 1);  // no workspace
  p.workspace = attention_workspace{scratch.data(), static_cast<int64_t>(scratch.size()), h100_sms};
  const split_plan plan = cuda_launch::attention_split_of(p);
  EXPECT_EQ(plan.num_splits, 32);
  EXPECT_EQ(plan.chunk, 1024);
  p.workspace.num_floats = split_scratch_floats(1, 32, 128, 32) - 1;
  EXPECT_EQ(cuda_launch::attention_split_of(p).num_splits, 1);  // too small: one pass
  p.workspace.num_floats = static_cast<int64_t>(scratch.size());
  const int32_t qsl[2] = {0, 1};
  p.query_start_loc = qsl;
  EXPECT_EQ(cuda_launch::attention_split_of(p).num_splits, 1);  // prefill never splits
}
#endif

} // namespace
} // namespace kvactor::kernels
