// CPU cache write, block copy and swap: memcpy of whole rows and blocks,
// spread over the pool.
#include <algorithm>
#include <cstring>

#include "base/assert.hpp"
#include "kernels/cpu/kernels.hpp"

namespace kvactor::kernels::cpu {

void cache_write(const cache_write_params& p, thread_pool& pool) {
  KVACTOR_ASSERT(p.num_kv_heads > 0 && p.head_dim > 0, "cache rows need positive sizes");
  const size_t row_bytes =
    static_cast<size_t>(p.num_kv_heads) * static_cast<size_t>(p.head_dim) * dtype_size(p.type);
  const size_t key_bytes =
    p.key_stride > 0 ? static_cast<size_t>(p.key_stride) * dtype_size(p.type) : row_bytes;
  const size_t value_bytes =
    p.value_stride > 0 ? static_cast<size_t>(p.value_stride) * dtype_size(p.type) : row_bytes;
  // NOTE: tokens go in chunks of ~256 KiB so that small batches do not pay
  // one pool hand-off per row.
  const int64_t rows_per_chunk =
    std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 18) / row_bytes));
  const int64_t num_chunks = (p.num_tokens + rows_per_chunk - 1) / rows_per_chunk;
  pool.parallel_for(num_chunks, [&](int64_t c) {
    const int64_t end = std::min<int64_t>(p.num_tokens, (c + 1) * rows_per_chunk);
    for (int64_t t = c * rows_per_chunk; t < end; ++t) {
      const int64_t slot = p.slot_mapping[t];
      if (slot < 0) continue;  // padding
      const size_t dst = static_cast<size_t>(slot) * row_bytes;
      std::memcpy(static_cast<char*>(p.k_cache) + dst,
                  static_cast<const char*>(p.key) + static_cast<size_t>(t) * key_bytes, row_bytes);
      std::memcpy(static_cast<char*>(p.v_cache) + dst,
                  static_cast<const char*>(p.value) + static_cast<size_t>(t) * value_bytes,
                  row_bytes);
    }
  });
}

void copy_blocks(const copy_blocks_params& p, thread_pool& pool) {
  const int64_t num_pools = 2 * int64_t{p.num_layers};
  pool.parallel_for(int64_t{p.num_pairs} * num_pools, [&](int64_t i) {
    const int64_t pair = i / num_pools, pool_index = i % num_pools;
    const int64_t src = p.pairs[2 * pair], dst = p.pairs[2 * pair + 1];
    KVACTOR_ASSERT(src >= 0 && src < p.num_blocks && dst >= 0 && dst < p.num_blocks,
                   "block id out of range");
    char* base = static_cast<char*>(p.cache) + pool_index * p.num_blocks * p.block_bytes;
    std::memcpy(base + dst * p.block_bytes, base + src * p.block_bytes,
                static_cast<size_t>(p.block_bytes));
  });
}

void swap_blocks(const kv_cache_view& src, const kv_cache_view& dst,
                 std::span<const block_pair> pairs, thread_pool& pool) {
  KVACTOR_ASSERT(src.shape.block_bytes() == dst.shape.block_bytes() &&
                   src.shape.num_layers == dst.shape.num_layers,
                 "swap between pools of different block shapes");
  const int64_t num_pools = 2 * int64_t{src.shape.num_layers};
  const size_t bytes = static_cast<size_t>(src.shape.block_bytes());
  pool.parallel_for(static_cast<int64_t>(pairs.size()) * num_pools, [&](int64_t i) {
    const block_pair& pair = pairs[static_cast<size_t>(i / num_pools)];
    const int64_t pool_index = i % num_pools;
    KVACTOR_ASSERT(pair.src >= 0 && pair.src < src.shape.num_blocks && pair.dst >= 0 &&
                     pair.dst < dst.shape.num_blocks,
                   "block id out of range");
    const auto layer = static_cast<int32_t>(pool_index / 2);
    const int which = static_cast<int>(pool_index % 2);
    std::memcpy(dst.block(layer, which, pair.dst), src.block(layer, which, pair.src), bytes);
  });
}

} // namespace kvactor::kernels::cpu
