#include "actors/core/pool_invariants.hpp"

#include <sstream>
#include <unordered_set>

namespace kvactor {

namespace {

// g++ 12 has no <format>: joins the pieces of one report line.
template <class... Ts>
std::string line(const Ts&... pieces) {
  std::ostringstream out;
  (out << ... << pieces);
  return out.str();
}

} // namespace

std::vector<std::string> check_invariants(const block_pool& pool,
                                          std::span<const block_table* const> tables) {
  std::vector<std::string> broken;
  std::vector<int32_t> holders(pool.num_blocks(), 0);
  for (const block_table* table : tables) {
    std::unordered_set<block_id> seen;
    for (block_id b : table->blocks()) {
      if (b < 0 || b >= pool.num_blocks()) {
        broken.push_back(line("table holds block ", b, " outside the pool"));
        continue;
      }
      if (!seen.insert(b).second)
        broken.push_back(line("a table holds block ", b, " twice"));
      ++holders[b];
    }
  }
  int32_t num_used = 0;
  int32_t num_hashed = 0;
  for (block_id b = 0; b < pool.num_blocks(); ++b) {
    const bool used = pool.ref_count(b) > 0;
    const int places = int{used} + int{pool.is_free(b)} + int{pool.is_cached_free(b)};
    if (places != 1)
      broken.push_back(line("block ", b, " is in ", places, " of used/free/cached"));
    if (pool.ref_count(b) != holders[b])
      broken.push_back(line("block ", b, " has ref_count ", pool.ref_count(b), " but ", holders[b],
                            " tables hold it"));
    if (pool.is_free(b) && pool.is_hashed(b))
      broken.push_back(line("free block ", b, " still has a prefix-cache entry"));
    if (pool.is_cached_free(b) && !pool.is_hashed(b))
      broken.push_back(line("cached block ", b, " has no prefix-cache entry"));
    num_used += used;
    num_hashed += pool.is_hashed(b);
  }
  if (num_used + pool.num_free_blocks() + pool.num_cached_free_blocks() != pool.num_blocks())
    broken.push_back(line("used ", num_used, " + free ", pool.num_free_blocks(), " + cached ",
                          pool.num_cached_free_blocks(), " != total ", pool.num_blocks()));
  if (num_hashed != pool.num_hashed_blocks())
    broken.push_back(line(num_hashed, " blocks are hashed but the prefix cache has ",
                          pool.num_hashed_blocks(), " entries"));
  return broken;
}

std::vector<std::string> check_invariants(const swap_space& space) {
  std::vector<std::string> broken;
  std::vector<int32_t> places(space.num_blocks(), 0);
  auto count = [&](block_id b) {
    if (b < 0 || b >= space.num_blocks())
      broken.push_back(line("host block ", b, " outside the pool"));
    else
      ++places[b];
  };
  for (block_id b : space.free_blocks())
    count(b);
  for (seq_id seq : space.sequences())
    for (block_id b : space.host_blocks(seq))
      count(b);
  for (block_id b = 0; b < space.num_blocks(); ++b)
    if (places[b] != 1)
      broken.push_back(line("host block ", b, " is free or held ", places[b], " times"));
  return broken;
}

} // namespace kvactor
