// Cache write, block copy and swap on the CPU device through the host API,
// and the KV cache sizing.
#include <gtest/gtest.h>

#include <future>
#include <random>

#include "kernels/cpu_device.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/ops.hpp"

namespace kvactor::kernels {
namespace {

kv_cache_shape small_shape(int64_t num_blocks) {
  return kv_cache_shape{.num_layers = 3, .num_blocks = num_blocks, .block_size = 16,
                        .num_kv_heads = 2, .head_dim = 64, .type = dtype::f16};
}

// Fills every byte of the pool with a value that names (layer, K|V, block, byte).
void fill_pattern(const kv_cache_view& c, uint8_t salt) {
  for (int32_t l = 0; l < c.shape.num_layers; ++l)
    for (int w = 0; w < 2; ++w)
      for (int64_t b = 0; b < c.shape.num_blocks; ++b) {
        auto* p = static_cast<uint8_t*>(c.block(l, w, b));
        for (int64_t i = 0; i < c.shape.block_bytes(); ++i)
          p[i] = static_cast<uint8_t>(salt + l * 31 + w * 17 + b * 7 + i);
      }
}

bool same_block(const kv_cache_view& a, int64_t block_a, const kv_cache_view& b, int64_t block_b) {
  for (int32_t l = 0; l < a.shape.num_layers; ++l)
    for (int w = 0; w < 2; ++w)
      if (std::memcmp(a.block(l, w, block_a), b.block(l, w, block_b),
                      static_cast<size_t>(a.shape.block_bytes())) != 0)
        return false;
  return true;
}

TEST(kv_cache, blocks_for_budget) {
  const kv_cache_shape s = small_shape(0);
  const int64_t per_block = 2 * 3 * 16 * 2 * 64 * 2;  // layers x K,V x block
  EXPECT_EQ(s.block_bytes(), 16 * 2 * 64 * 2);
  EXPECT_EQ(num_blocks_for_budget(per_block * 10, s), 10);
  EXPECT_EQ(num_blocks_for_budget(per_block * 10 - 1, s), 9);
  EXPECT_EQ(num_blocks_for_budget(0, s), 0);
  cpu_device dev(device_options{.device_bytes = per_block * 10 + 100, .num_threads = 1});
  EXPECT_EQ(num_blocks_for_budget(budget_from_free_memory(dev, memory_kind::device, 0.5), s), 5);
}

TEST(kv_cache, layout_offsets) {
  const kv_cache_view v{reinterpret_cast<void*>(0x1000), small_shape(4)};
  const int64_t bb = v.shape.block_bytes(), pool = 4 * bb;
  EXPECT_EQ(static_cast<char*>(v.k(0)), reinterpret_cast<char*>(0x1000));
  EXPECT_EQ(static_cast<char*>(v.v(0)) - static_cast<char*>(v.k(0)), pool);
  EXPECT_EQ(static_cast<char*>(v.k(2)) - static_cast<char*>(v.k(0)), 4 * pool);
  EXPECT_EQ(static_cast<char*>(v.block(1, 1, 3)) - static_cast<char*>(v.k(0)), 3 * pool + 3 * bb);
}

TEST(kv_cache, allocation_respects_the_arena) {
  cpu_device dev(
    device_options{.device_bytes = 1 << 20, .pinned_bytes = 1 << 18, .num_threads = 1});
  EXPECT_TRUE(allocate_kv_cache(dev, memory_kind::device, small_shape(20)).has_value());  // 737 KiB
  EXPECT_FALSE(allocate_kv_cache(dev, memory_kind::pinned_host, small_shape(20)).has_value());
}

TEST(cache_ops, cache_write_scatters_rows_and_skips_padding) {
  cpu_device dev(device_options{.num_threads = 2});
  const int32_t heads = 2, dim = 64, num_tokens = 5;
  const int64_t row = heads * dim;
  std::vector<float> k_cache(8 * 16 * row, -1.0f), v_cache(8 * 16 * row, -1.0f);
  std::vector<float> key(num_tokens * row), value(num_tokens * row);
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<float>(i);
    value[i] = -static_cast<float>(i) - 1.0f;
  }
  const std::vector<int64_t> slots{37, -1, 0, 127, 16};
  cache_write_params p{key.data(),     value.data(), k_cache.data(),
                       v_cache.data(), slots.data(), num_tokens,
                       heads,          dim,          dtype::f32};
  cache_write(dev, streams::compute, p);
  dev.record(streams::compute)->wait();
  std::vector<float> k_expected(k_cache.size(), -1.0f), v_expected(v_cache.size(), -1.0f);
  for (int32_t t = 0; t < num_tokens; ++t) {
    if (slots[static_cast<size_t>(t)] < 0) continue;
    for (int64_t i = 0; i < row; ++i) {
      k_expected[static_cast<size_t>(slots[static_cast<size_t>(t)] * row + i)] =
        key[static_cast<size_t>(t * row + i)];
      v_expected[static_cast<size_t>(slots[static_cast<size_t>(t)] * row + i)] =
        value[static_cast<size_t>(t * row + i)];
    }
  }
  EXPECT_EQ(k_cache, k_expected);
  EXPECT_EQ(v_cache, v_expected);
}

TEST(cache_ops, cache_write_reads_k_and_v_in_place_from_fused_qkv_rows) {
  cpu_device dev(device_options{.num_threads = 2});
  const int32_t heads = 2, kv_heads = 1, dim = 64, num_tokens = 3;
  const int64_t stride = (heads + 2 * kv_heads) * dim;  // [q | k | v] per token
  std::vector<float> qkv(static_cast<size_t>(num_tokens * stride));
  for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i);
  std::vector<float> k_cache(4 * 16 * dim, -1.0f), v_cache(4 * 16 * dim, -1.0f);
  const std::vector<int64_t> slots{9, 40, 0};
  // K and V read in place, rows `stride` apart.
  cache_write_params p{qkv.data() + heads * dim, qkv.data() + (heads + kv_heads) * dim,
                       k_cache.data(), v_cache.data(), slots.data(), num_tokens, kv_heads, dim,
                       dtype::f32, stride, stride};
  cache_write(dev, streams::compute, p);
  dev.record(streams::compute)->wait();
  for (int32_t t = 0; t < num_tokens; ++t)
    for (int32_t i = 0; i < dim; ++i) {
      const auto slot = static_cast<size_t>(slots[static_cast<size_t>(t)]);
      EXPECT_EQ(k_cache[slot * dim + static_cast<size_t>(i)],
                qkv[static_cast<size_t>(t * stride + heads * dim + i)]);
      EXPECT_EQ(v_cache[slot * dim + static_cast<size_t>(i)],
                qkv[static_cast<size_t>(t * stride + (heads + kv_heads) * dim + i)]);
    }
}

TEST(cache_ops, copy_blocks_copies_every_layer_and_nothing_else) {
  cpu_device dev(device_options{.num_threads = 2});
  auto cache = allocate_kv_cache(dev, memory_kind::device, small_shape(8));
  ASSERT_TRUE(cache);
  fill_pattern(cache->view, 0);
  std::vector<uint8_t> before(static_cast<const uint8_t*>(cache->view.base),
                              static_cast<const uint8_t*>(cache->view.base) +
                                cache->view.shape.total_bytes());
  const kv_cache_view original{before.data(), cache->view.shape};
  const std::vector<int32_t> pairs{1, 6, 3, 0, 3, 5};  // (1->6), (3->0), (3->5)
  copy_blocks(
    dev, streams::compute,
    copy_blocks_params{cache->view.base, pairs.data(), 3, 3, 8, cache->view.shape.block_bytes()});
  dev.record(streams::compute)->wait();
  EXPECT_TRUE(same_block(cache->view, 6, original, 1));
  EXPECT_TRUE(same_block(cache->view, 0, original, 3));
  EXPECT_TRUE(same_block(cache->view, 5, original, 3));
  for (int64_t b : {1, 2, 3, 4, 7})
    EXPECT_TRUE(same_block(cache->view, b, original, b)) << "block " << b;
}

TEST(cache_ops, swap_out_and_in_round_trips_through_the_host_pool) {
  cpu_device dev(
    device_options{.device_bytes = 1 << 20, .pinned_bytes = 1 << 20, .num_threads = 2});
  auto gpu = allocate_kv_cache(dev, memory_kind::device, small_shape(10));
  auto host = allocate_kv_cache(dev, memory_kind::pinned_host, small_shape(6));
  ASSERT_TRUE(gpu && host);
  fill_pattern(gpu->view, 1);
  fill_pattern(host->view, 99);
  std::vector<uint8_t> saved(static_cast<const uint8_t*>(gpu->view.base),
                             static_cast<const uint8_t*>(gpu->view.base) +
                               gpu->view.shape.total_bytes());
  const kv_cache_view original{saved.data(), gpu->view.shape};

  std::promise<void> out_done;
  const event_ptr out = swap_blocks(dev, streams::swap_out, gpu->view, host->view,
                                    {{2, 0}, {7, 5}, {9, 1}}, [&] { out_done.set_value(); });
  // the compute stream may reuse the swapped-out blocks once the copy is done
  dev.wait_event(streams::compute, out);
  dev.enqueue(streams::compute, [&] {
    std::memset(gpu->view.base, 0, static_cast<size_t>(gpu->view.shape.total_bytes()));
  });
  ASSERT_EQ(out_done.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  dev.record(streams::compute)->wait();
  EXPECT_TRUE(same_block(host->view, 0, original, 2));
  EXPECT_TRUE(same_block(host->view, 5, original, 7));
  EXPECT_TRUE(same_block(host->view, 1, original, 9));

  const event_ptr in =
    swap_blocks(dev, streams::swap_in, host->view, gpu->view, {{0, 4}, {5, 3}, {1, 0}});
  in->wait();
  EXPECT_TRUE(same_block(gpu->view, 4, original, 2));
  EXPECT_TRUE(same_block(gpu->view, 3, original, 7));
  EXPECT_TRUE(same_block(gpu->view, 0, original, 9));
  std::vector<uint8_t> zero(static_cast<size_t>(gpu->view.shape.block_bytes()), 0);
  // untouched block stays cleared
  EXPECT_EQ(std::memcmp(gpu->view.block(2, 1, 1), zero.data(), zero.size()), 0);
}

} // namespace
} // namespace kvactor::kernels
