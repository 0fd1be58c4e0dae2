#pragma once
// KV cache memory: one allocation per pool (device or pinned host) holding
//
//   base: [num_layers, 2 (K, V), num_blocks, block_size, num_kv_heads, head_dim]
//
// so layer l's K is [num_blocks, block_size, num_kv_heads, head_dim] at
// k(l) and its V follows at v(l).
// NOTE: token-major blocks ([block_size, num_kv_heads, head_dim]) make one
// token's K (or V) row for all heads contiguous: cache write is one copy per
// token, and the decode kernels read each head's row as head_dim contiguous
// elements. One allocation for all layers lets block copy and swap address
// any (layer, K|V, block) from a single base pointer.

#include <cstdint>
#include <optional>

#include "kernels/device.hpp"
#include "kernels/dtype.hpp"

namespace kvactor::kernels {

struct kv_cache_shape {
  int32_t num_layers = 0;
  int64_t num_blocks = 0;
  int32_t block_size = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  dtype type = dtype::f32;

  // One block of one layer's K (or V): [block_size, num_kv_heads, head_dim].
  int64_t block_bytes() const {
    return int64_t{block_size} * num_kv_heads * head_dim * static_cast<int64_t>(dtype_size(type));
  }
  // One layer's K (or V): [num_blocks, block_size, num_kv_heads, head_dim].
  int64_t pool_bytes() const { return num_blocks * block_bytes(); }
  int64_t total_bytes() const { return 2 * int64_t{num_layers} * pool_bytes(); }
};

// A view of cache memory; does not own it.
struct kv_cache_view {
  void* base = nullptr;  // [num_layers, 2, num_blocks, block_size, num_kv_heads, head_dim]
  kv_cache_shape shape;

  // [num_blocks, block_size, num_kv_heads, head_dim]
  void* k(int32_t layer) const { return pool(layer, 0); }
  // [num_blocks, block_size, num_kv_heads, head_dim]
  void* v(int32_t layer) const { return pool(layer, 1); }
  // K or V (which 0 or 1) of `block` in `layer`: [block_size, num_kv_heads, head_dim].
  void* block(int32_t layer, int which, int64_t block_id) const {
    return static_cast<char*>(pool(layer, which)) + block_id * shape.block_bytes();
  }

private:
  void* pool(int32_t layer, int which) const {
    return static_cast<char*>(base) + (2 * int64_t{layer} + which) * shape.pool_bytes();
  }
};

// One block to copy: (src block, dst block).
struct block_pair {
  int32_t src;
  int32_t dst;
};

// Owns the memory of one pool.
struct kv_cache {
  buffer memory;
  kv_cache_view view;
};

// Blocks that fit in budget_bytes (shape.num_blocks is ignored); 0 if none.
int64_t num_blocks_for_budget(int64_t budget_bytes, const kv_cache_shape& shape);

// A fraction (0, 1] of the memory of `kind` that is free now.
int64_t budget_from_free_memory(const device& dev, memory_kind kind, double fraction);

// Allocates shape.total_bytes() of `kind`; std::nullopt when it does not fit.
std::optional<kv_cache> allocate_kv_cache(device& dev, memory_kind kind,
                                          const kv_cache_shape& shape);

} // namespace kvactor::kernels
