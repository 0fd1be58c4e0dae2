// The CUDA paged-attention kernel source, run through the emulator against the
// double-precision reference: decode and prefill/extend over dtype x head_dim
// x block_size x GQA ratio.
#include <gtest/gtest.h>

#include <tuple>

#include "kernels/cuda/paged_attention.cuh"
#include "tests/kernels/attention_problem.hpp"

namespace kvactor::kernels {
namespace {

using testing::attention_config;

// Mirrors the launcher in kernels/cuda/kernels.cu.
template <class T, int HEAD_DIM>
void launch_emulated_head_dim(const paged_attention_params& p) {
  const int group = gpu::attention_group_size(p.num_heads / p.num_kv_heads);
  const dim3 grid(static_cast<unsigned>(p.num_tokens) * static_cast<unsigned>(p.num_heads / group));
  const dim3 block(gpu::attention_threads);
  switch (group) {
  case 1: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 1>, p); break;
  case 2: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 2>, p); break;
  case 4: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 4>, p); break;
  case 8: emu::launch(grid, block, gpu::paged_attention_kernel<T, HEAD_DIM, 8>, p); break;
  default: FAIL() << "group " << group;
  }
}

template <class T>
void launch_emulated(const paged_attention_params& p) {
  if (p.head_dim == 64) launch_emulated_head_dim<T, 64>(p);
  else if (p.head_dim == 128) launch_emulated_head_dim<T, 128>(p);
  else FAIL() << "head_dim " << p.head_dim;
}

void run_and_check(const attention_config& config) {
  SCOPED_TRACE(config.name());
  const auto problem = testing::make_attention_problem(config, 1234);
  std::vector<uint8_t> out(problem.out_bytes());
  const paged_attention_params p = problem.params(out.data());
  switch (config.type) {
  case dtype::f32: launch_emulated<float>(p); break;
  case dtype::f16: launch_emulated<gpu::f16>(p); break;
  case dtype::bf16: launch_emulated<gpu::bf16>(p); break;
  }
  const auto actual =
    testing::to_floats(config.type, out.data(), out.size() / dtype_size(config.type));
  EXPECT_TRUE(
    testing::all_close(actual, problem.reference(), testing::attention_tolerance(config.type)));
}

// dtype, head_dim, block_size, GQA ratio
using shape = std::tuple<dtype, int, int, int>;

class emulated_attention : public ::testing::TestWithParam<shape> {
protected:
  attention_config base() const {
    const auto [type, head_dim, block_size, ratio] = GetParam();
    return testing::gqa_config(type, head_dim, block_size, ratio);
  }
};

TEST_P(emulated_attention, decode_matches_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  c.seq_lens = {1, bs - 1, bs, bs + 1, 300};
  run_and_check(c);
}

TEST_P(emulated_attention, prefill_and_extend_match_reference) {
  attention_config c = base();
  const int bs = c.block_size;
  // a fresh prefill, an extend across a block boundary, a decode-like extend
  // behind a long cached prefix
  c.seq_lens = {7, bs + 3, 261};
  c.query_pad = 2 * c.num_kv_heads * c.head_dim;  // queries read in place from fused QKV rows
  c.query_lens = {7, 5, 2};
  run_and_check(c);
}

// GQA ratios 8 (group of 8) and 6 (three groups of 2 per KV head).
TEST(emulated_attention_groups, other_gqa_ratios_match_reference) {
  for (int ratio : {6, 8}) {
    attention_config c;
    c.type = dtype::f16;
    c.head_dim = 128;
    c.block_size = 16;
    c.num_kv_heads = 2;
    c.num_heads = 2 * ratio;
    c.seq_lens = {1, 17, 150};
    run_and_check(c);
  }
}

std::string shape_name(const ::testing::TestParamInfo<shape>& info) {
  const auto [type, head_dim, block_size, ratio] = info.param;
  return std::string(dtype_name(type)) + "_d" + std::to_string(head_dim) + "_bs" +
         std::to_string(block_size) + "_gqa" + std::to_string(ratio);
}

INSTANTIATE_TEST_SUITE_P(all, emulated_attention,
                         ::testing::Combine(::testing::Values(dtype::f32, dtype::f16, dtype::bf16),
                                            ::testing::Values(64, 128), ::testing::Values(16, 32),
                                            ::testing::Values(1, 4)),
                         shape_name);

} // namespace
} // namespace kvactor::kernels
