#include "kernels/kv_cache.hpp"

#include "base/assert.hpp"

namespace kvactor::kernels {

int64_t num_blocks_for_budget(int64_t budget_bytes, const kv_cache_shape& shape) {
  KVACTOR_ASSERT(shape.num_layers > 0 && shape.block_size > 0 && shape.num_kv_heads > 0 &&
                   shape.head_dim > 0,
                 "cache shape needs positive sizes");
  // all layers, K and V
  const int64_t per_block = 2 * int64_t{shape.num_layers} * shape.block_bytes();
  return budget_bytes <= 0 ? 0 : budget_bytes / per_block;
}

int64_t budget_from_free_memory(const device& dev, memory_kind kind, double fraction) {
  KVACTOR_ASSERT(fraction > 0.0 && fraction <= 1.0, "fraction must be in (0, 1]");
  return static_cast<int64_t>(static_cast<double>(dev.memory(kind).free_bytes) * fraction);
}

std::optional<kv_cache> allocate_kv_cache(device& dev, memory_kind kind,
                                          const kv_cache_shape& shape) {
  KVACTOR_ASSERT(shape.num_blocks > 0, "cache needs at least one block");
  KVACTOR_ASSERT(shape.block_bytes() % 16 == 0, "cache rows must be whole 16-byte vectors");
  auto memory = dev.allocate(kind, static_cast<size_t>(shape.total_bytes()));
  if (!memory) return std::nullopt;
  kv_cache cache;
  cache.view = kv_cache_view{memory->data(), shape};
  cache.memory = std::move(*memory);
  return cache;
}

} // namespace kvactor::kernels
