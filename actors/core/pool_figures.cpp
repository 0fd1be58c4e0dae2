#include "actors/core/pool_figures.hpp"

#include <cstdio>

namespace kvactor {

namespace {

double ratio(int64_t num, int64_t den, double if_empty) {
  return den == 0 ? if_empty : static_cast<double>(num) / static_cast<double>(den);
}

} // namespace

double pool_figures::kv_utilisation() const {
  return ratio(num_used_slots, num_allocated_slots, 1.0);
}

double pool_figures::sharing_ratio() const {
  return ratio(num_block_refs, num_used_blocks, 1.0);
}

double pool_figures::prefix_hit_rate() const {
  return ratio(num_prefix_hits, num_prefix_queries, 0.0);
}

pool_figures measure(const block_pool& pool) {
  pool_figures f;
  f.num_blocks = pool.num_blocks();
  f.num_free_blocks = pool.num_free_blocks();
  f.num_cached_blocks = pool.num_cached_free_blocks();
  f.num_used_blocks = pool.num_used_blocks();
  f.num_allocated_slots = int64_t{f.num_used_blocks} * pool.block_size();
  for (block_id b = 0; b < pool.num_blocks(); ++b) {
    if (pool.ref_count(b) == 0)
      continue;
    f.num_used_slots += pool.num_filled(b);
    f.num_block_refs += pool.ref_count(b);
  }
  f.num_evictions = pool.num_evictions();
  return f;
}

std::string to_string(const pool_figures& f) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "blocks %d: used %d, free %d, cached %d | slots used %lld of %lld "
                "(kv utilisation %.1f%%) | sharing %.2f | prefix hits %lld of %lld "
                "(%.1f%%) | evictions %lld",
                f.num_blocks, f.num_used_blocks, f.num_free_blocks, f.num_cached_blocks,
                static_cast<long long>(f.num_used_slots),
                static_cast<long long>(f.num_allocated_slots), 100.0 * f.kv_utilisation(),
                f.sharing_ratio(), static_cast<long long>(f.num_prefix_hits),
                static_cast<long long>(f.num_prefix_queries), 100.0 * f.prefix_hit_rate(),
                static_cast<long long>(f.num_evictions));
  return buf;
}

} // namespace kvactor
