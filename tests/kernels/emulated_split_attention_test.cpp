// Split-K decode attention (cuda/paged_attention_split.cuh) run through the
// emulator against the double-precision reference: contexts up to 32k, a
// context that is not a multiple of the chunk, one shorter than a chunk,
// sequences that end before the last split, and the launcher's split
// decision crossing its threshold (split and one pass agree).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/attention_split.hpp"
#include "kernels/cuda/paged_attention_split.cuh"
#include "tests/kernels/attention_problem.hpp"

namespace kvactor::kernels {
namespace {

using testing::attention_config;

constexpr int32_t h100_sms = 132;

// Mirrors launch_attention_group in kernels/cuda/kernels.cu.
template <class T, int HEAD_DIM, int G>
void launch_group(const paged_attention_params& p, split_plan plan) {
  const auto blocks = static_cast<unsigned>(p.num_tokens) * static_cast<unsigned>(p.num_heads / G);
  if (plan.num_splits == 1) {
    emu::launch(dim3(blocks), dim3(gpu::attention_threads),
                gpu::paged_attention_kernel<T, HEAD_DIM, G>, p);
    return;
  }
  emu::launch(dim3(blocks * static_cast<unsigned>(plan.num_splits)), dim3(gpu::attention_threads),
              gpu::paged_attention_split_kernel<T, HEAD_DIM, G>, p, plan);
  emu::launch(dim3(static_cast<unsigned>(p.num_seqs * p.num_heads)), dim3(HEAD_DIM),
              gpu::attention_merge_kernel<T, HEAD_DIM>, p, plan);
}

template <class T, int HEAD_DIM>
void launch_head_dim(const paged_attention_params& p, split_plan plan) {
  switch (gpu::attention_group_size(p.num_heads / p.num_kv_heads)) {
  case 1: launch_group<T, HEAD_DIM, 1>(p, plan); break;
  case 2: launch_group<T, HEAD_DIM, 2>(p, plan); break;
  case 4: launch_group<T, HEAD_DIM, 4>(p, plan); break;
  case 8: launch_group<T, HEAD_DIM, 8>(p, plan); break;
  default: FAIL();
  }
}

template <class T>
void launch_typed(const paged_attention_params& p, split_plan plan) {
  if (p.head_dim == 64) launch_head_dim<T, 64>(p, plan);
  else if (p.head_dim == 128) launch_head_dim<T, 128>(p, plan);
  else FAIL() << "head_dim " << p.head_dim;
}

// The output of one launch with `plan` (num_splits 1 = the one-pass kernel),
// scratch NaN-filled so a partial the merge should skip but reads shows up.
std::vector<float> run(const testing::attention_problem& pr, split_plan plan) {
  std::vector<uint8_t> out(pr.out_bytes());
  const int32_t num_seqs = static_cast<int32_t>(pr.seq_lens.size());
  std::vector<float> scratch(static_cast<size_t>(split_scratch_floats(
                               num_seqs, pr.config.num_heads, pr.config.head_dim, plan.num_splits)),
                             std::numeric_limits<float>::quiet_NaN());
  paged_attention_params p = pr.params(out.data());
  p.workspace = attention_workspace{scratch.data(), static_cast<int64_t>(scratch.size()), h100_sms};
  switch (pr.config.type) {
  case dtype::f32: launch_typed<float>(p, plan); break;
  case dtype::f16: launch_typed<gpu::f16>(p, plan); break;
  case dtype::bf16: launch_typed<gpu::bf16>(p, plan); break;
  }
  return testing::to_floats(pr.config.type, out.data(), out.size() / dtype_size(pr.config.type));
}

void check(const attention_config& config, split_plan plan) {
  SCOPED_TRACE(config.name() + " splits " + std::to_string(plan.num_splits) + " chunk " +
               std::to_string(plan.chunk));
  const auto pr = testing::make_attention_problem(config, 99);
  EXPECT_TRUE(
    testing::all_close(run(pr, plan), pr.reference(), testing::attention_tolerance(config.type)));
}

// The plan the launcher makes for a decode batch of this config on an H100.
split_plan launcher_plan(const attention_config& c) {
  int32_t max_blocks = 0;
  for (int32_t len : c.seq_lens)
    max_blocks = std::max(max_blocks, (len + c.block_size - 1) / c.block_size);
  const int group = gpu::attention_group_size(c.num_heads / c.num_kv_heads);
  return plan_attention_split(static_cast<int32_t>(c.seq_lens.size()), c.num_heads / group,
                              static_cast<int64_t>(max_blocks) * c.block_size, h100_sms);
}

// dtype, head_dim, GQA ratio
using shape = std::tuple<dtype, int, int>;

class emulated_cuda_split_attention : public ::testing::TestWithParam<shape> {
protected:
  attention_config base() const {
    const auto [type, head_dim, ratio] = GetParam();
    return testing::gqa_config(type, head_dim, 16, ratio);
  }
};

// Chunks of one tile make many splits over short contexts: 1000 keys are
// 7 full chunks and a partial one, 300 keys end five splits early, 5 keys
// lie in split 0 alone.
TEST_P(emulated_cuda_split_attention, small_chunks_match_reference) {
  attention_config c = base();
  c.seq_lens = {1000, 300, 5};
  check(c, split_plan{8, 128});
}

// The launcher's own plan for a few long sequences (split at chunks >= 512).
TEST_P(emulated_cuda_split_attention, launcher_plan_matches_reference) {
  attention_config c = base();
  c.seq_lens = {2100, 700};
  const split_plan plan = launcher_plan(c);
  ASSERT_GT(plan.num_splits, 1);
  ASSERT_EQ(plan.chunk % split_tile, 0);
  check(c, plan);
}

std::string shape_name(const ::testing::TestParamInfo<shape>& info) {
  const auto [type, head_dim, ratio] = info.param;
  return std::string(dtype_name(type)) + "_d" + std::to_string(head_dim) + "_gqa" +
         std::to_string(ratio);
}

INSTANTIATE_TEST_SUITE_P(all, emulated_cuda_split_attention,
                         ::testing::Combine(::testing::Values(dtype::f32, dtype::f16, dtype::bf16),
                                            ::testing::Values(64, 128), ::testing::Values(1, 4)),
                         shape_name);

// A context shorter than one chunk: the plan does not split, and a forced
// split of two chunks leaves the second empty for every sequence.
TEST(emulated_cuda_split_attention_edges, a_context_shorter_than_one_chunk) {
  attention_config c = testing::gqa_config(dtype::bf16, 128, 16, 4);
  c.seq_lens = {split_min_chunk - 1, 17};
  EXPECT_EQ(launcher_plan(c).num_splits, 1);
  check(c, split_plan{2, split_min_chunk});
}

// The launcher's decision crossing its threshold: one key under two minimal
// chunks runs in one pass, at two chunks it splits; both agree with the
// reference and with each other.
TEST(emulated_cuda_split_attention_edges, split_and_one_pass_agree_across_the_threshold) {
  for (dtype type : {dtype::f32, dtype::bf16}) {
    for (int32_t len : {2 * split_min_chunk - 16, 2 * split_min_chunk}) {
      attention_config c = testing::gqa_config(type, 128, 16, 4);
      c.seq_lens = {len};
      SCOPED_TRACE(c.name());
      const split_plan plan = launcher_plan(c);
      EXPECT_EQ(plan.num_splits > 1, len >= 2 * split_min_chunk);
      const auto pr = testing::make_attention_problem(c, 7);
      const auto one_pass = run(pr, split_plan{});
      const auto split = run(pr, plan.num_splits > 1 ? plan : split_plan{2, split_min_chunk});
      const auto tol = testing::attention_tolerance(type);
      EXPECT_TRUE(testing::all_close(one_pass, pr.reference(), tol));
      EXPECT_TRUE(testing::all_close(split, pr.reference(), tol));
      const std::vector<double> one_pass_d(one_pass.begin(), one_pass.end());
      EXPECT_TRUE(testing::all_close(split, one_pass_d, tol));
    }
  }
}

// A 32k context, batch 1, one KV head with a GQA group of 4 query heads (the
// emulator runs one fiber per CUDA thread: few heads keep it to seconds),
// in f32 and bf16, with the launcher's plan (chunks of the minimum).
TEST(emulated_cuda_split_attention_edges, a_32k_context_matches_reference) {
  for (dtype type : {dtype::f32, dtype::bf16}) {
    attention_config c;
    c.type = type;
    c.head_dim = 128;
    c.block_size = 16;
    c.num_kv_heads = 1;
    c.num_heads = 4;
    c.seq_lens = {32768};
    const split_plan plan = launcher_plan(c);
    EXPECT_EQ(plan.num_splits, 32768 / split_min_chunk);
    EXPECT_EQ(plan.chunk, split_min_chunk);
    const auto start = std::chrono::steady_clock::now();
    check(c, plan);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
    RecordProperty(std::string("ms_") + dtype_name(type), static_cast<int>(ms.count()));
  }
}

} // namespace
} // namespace kvactor::kernels
