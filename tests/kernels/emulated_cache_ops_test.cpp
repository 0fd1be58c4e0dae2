// The CUDA cache-write, block-copy and block-swap kernel sources through the emulator.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/cuda/cache_write.cuh"
#include "kernels/cuda/copy_blocks.cuh"
#include "kernels/cuda/swap_blocks.cuh"

namespace kvactor::kernels {
namespace {

class emulated_cache_write : public ::testing::TestWithParam<std::tuple<dtype, int>> {};

TEST_P(emulated_cache_write, scatters_rows_and_skips_padding) {
  const auto [type, head_dim] = GetParam();
  const int32_t heads = 4, num_tokens = 6, num_slots = 3 * 16;
  const size_t row = static_cast<size_t>(heads * head_dim) * dtype_size(type);  // bytes
  std::vector<uint8_t> key(num_tokens * row), value(num_tokens * row);
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<uint8_t>(i * 3 + 1);
    value[i] = static_cast<uint8_t>(i * 5 + 2);
  }
  std::vector<uint8_t> k_cache(num_slots * row, 0xee), v_cache(num_slots * row, 0xdd);
  const std::vector<int64_t> slots{17, -1, 0, 47, 16, -1};
  const cache_write_params p{key.data(),     value.data(), k_cache.data(),
                             v_cache.data(), slots.data(), num_tokens,
                             heads,          head_dim,     type};
  emu::launch(dim3(num_tokens), dim3(gpu::cache_write_threads), gpu::cache_write_kernel, p);
  std::vector<uint8_t> k_expected(num_slots * row, 0xee), v_expected(num_slots * row, 0xdd);
  for (size_t t = 0; t < slots.size(); ++t) {
    if (slots[t] < 0) continue;
    std::memcpy(&k_expected[static_cast<size_t>(slots[t]) * row], &key[t * row], row);
    std::memcpy(&v_expected[static_cast<size_t>(slots[t]) * row], &value[t * row], row);
  }
  EXPECT_TRUE(k_cache == k_expected);
  EXPECT_TRUE(v_cache == v_expected);
}

INSTANTIATE_TEST_SUITE_P(all, emulated_cache_write,
                         ::testing::Combine(::testing::Values(dtype::f32, dtype::f16, dtype::bf16),
                                            ::testing::Values(64, 128)));

TEST(emulated_cache_write_strided, reads_rows_from_fused_qkv) {
  const int32_t kv_heads = 2, dim = 64, num_tokens = 4;
  const int64_t stride = 6 * dim;  // elements per token: [q (2 heads) | k | v]
  std::vector<float> qkv(static_cast<size_t>(num_tokens * stride));
  for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i) * 0.5f;
  std::vector<float> k_cache(2 * 16 * kv_heads * dim, -1.0f), v_cache(k_cache.size(), -1.0f);
  const std::vector<int64_t> slots{3, 31, -1, 16};
  // K and V read in place, rows `stride` apart.
  const cache_write_params p{qkv.data() + 2 * dim, qkv.data() + 4 * dim, k_cache.data(),
                             v_cache.data(), slots.data(), num_tokens, kv_heads, dim, dtype::f32,
                             stride, stride};
  emu::launch(dim3(num_tokens), dim3(gpu::cache_write_threads), gpu::cache_write_kernel, p);
  const size_t row = static_cast<size_t>(kv_heads * dim);
  for (size_t t = 0; t < slots.size(); ++t) {
    if (slots[t] < 0) continue;
    for (size_t i = 0; i < row; ++i) {
      EXPECT_EQ(k_cache[static_cast<size_t>(slots[t]) * row + i],
                qkv[t * static_cast<size_t>(stride) + 2 * dim + i]);
      EXPECT_EQ(v_cache[static_cast<size_t>(slots[t]) * row + i],
                qkv[t * static_cast<size_t>(stride) + 4 * dim + i]);
    }
  }
  EXPECT_EQ(k_cache[0], -1.0f);  // untouched slot
}

TEST(emulated_copy_blocks, copies_each_pair_in_every_layer) {
  const int32_t layers = 2;
  const int64_t num_blocks = 6, block_bytes = 16 * 2 * 64 * 2;
  std::vector<uint8_t> cache(static_cast<size_t>(2 * layers * num_blocks * block_bytes));
  for (size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<uint8_t>(i * 13 / 7);
  const std::vector<uint8_t> before = cache;
  const std::vector<int32_t> pairs{0, 5, 2, 1, 2, 3};
  const copy_blocks_params p{cache.data(), pairs.data(), 3, layers, num_blocks, block_bytes};
  emu::launch(dim3(3, 2 * layers), dim3(gpu::copy_blocks_threads), gpu::copy_blocks_kernel, p);
  std::vector<uint8_t> expected = before;
  for (int64_t pool = 0; pool < 2 * layers; ++pool)
    for (size_t i = 0; i < 3; ++i) {
      const int64_t base = pool * num_blocks * block_bytes;
      std::memcpy(&expected[static_cast<size_t>(base + pairs[2 * i + 1] * block_bytes)],
                  &before[static_cast<size_t>(base + pairs[2 * i] * block_bytes)],
                  static_cast<size_t>(block_bytes));
    }
  EXPECT_TRUE(cache == expected);
  EXPECT_FALSE(cache == before);
}

// Two pools of different sizes; every (layer, K|V) of each pair moves, and
// nothing else of the destination changes.
TEST(emulated_swap_blocks, moves_every_layer_of_each_pair_in_one_launch) {
  const int32_t layers = 3;
  const int64_t src_blocks = 5, dst_blocks = 7, block_bytes = 96;
  std::vector<uint8_t> src(static_cast<size_t>(layers * 2 * src_blocks * block_bytes));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<uint8_t> dst(static_cast<size_t>(layers * 2 * dst_blocks * block_bytes), 0xaa);
  swap_blocks_params p{};
  p.src = src.data();
  p.dst = dst.data();
  p.src_num_blocks = src_blocks;
  p.dst_num_blocks = dst_blocks;
  p.block_bytes = block_bytes;
  p.num_layers = layers;
  const std::vector<std::pair<int32_t, int32_t>> pairs{{4, 0}, {0, 6}, {2, 3}};
  p.num_pairs = static_cast<int32_t>(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    p.pairs[2 * i] = pairs[i].first;
    p.pairs[2 * i + 1] = pairs[i].second;
  }
  emu::launch(dim3(static_cast<unsigned>(p.num_pairs), static_cast<unsigned>(2 * layers)),
              dim3(gpu::swap_blocks_threads), gpu::swap_blocks_kernel, p);
  std::vector<uint8_t> expected(dst.size(), 0xaa);
  const auto bytes = static_cast<size_t>(block_bytes);
  for (int64_t pool = 0; pool < 2 * layers; ++pool)
    for (const auto& [from, to] : pairs)
      std::memcpy(&expected[static_cast<size_t>((pool * dst_blocks + to) * block_bytes)],
                  &src[static_cast<size_t>((pool * src_blocks + from) * block_bytes)], bytes);
  EXPECT_TRUE(dst == expected);
}

} // namespace
} // namespace kvactor::kernels
