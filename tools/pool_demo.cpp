// kvactor-pool-demo: walks the device block pool through allocation, prefix
// sharing, fork with copy-on-write, swap-out and release, printing the pool's
// figures after each step and checking its invariants at the end.

#include "actors/core/block_allocator.hpp"
#include "actors/core/pool_invariants.hpp"
#include "actors/core/swap_space.hpp"

#include <cstdio>
#include <numeric>
#include <string>

using namespace kvactor;

namespace {

constexpr int32_t block_size = 16;

std::vector<token_id> tokens(int n, token_id first) {
  std::vector<token_id> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

std::string blocks_of(const kv_sequence& seq) {
  std::string out;
  for (block_id b : seq.table().blocks()) {
    out += out.empty() ? "[" : " ";
    out += std::to_string(b);
  }
  return out + "]";
}

// Plays one forward pass over every uncomputed token of seq.
void run_prefill(block_allocator& mgr, kv_sequence& seq) {
  auto hit = mgr.find_cached_prefix(seq);
  const int32_t n = seq.num_uncomputed_tokens() - int32_t(hit.blocks.size()) * block_size;
  if (!mgr.allocate_slots(seq, n, &hit)) {
    std::printf("  sequence %llu does not fit\n", static_cast<unsigned long long>(seq.id()));
    return;
  }
  seq.add_computed_tokens(n);
  mgr.cache_computed_blocks(seq);
  std::printf("  sequence %llu: %d tokens, %zu from the prefix cache, blocks %s\n",
              static_cast<unsigned long long>(seq.id()), seq.num_tokens(),
              hit.blocks.size() * block_size, blocks_of(seq).c_str());
}

void show(const char* what, const block_allocator& mgr, const swap_space& host) {
  std::printf("%s\n  device: %s\n  host: %d of %d blocks free\n", what,
              to_string(mgr.figures()).c_str(), host.num_free_blocks(), host.num_blocks());
}

} // namespace

int main() {
  block_allocator mgr(16, block_size);
  swap_space host(8);
  std::printf("kvactor block pool: 16 device blocks, 8 host blocks, %d tokens per block\n\n",
              block_size);

  kv_sequence a(1, tokens(55, 0), block_size);
  run_prefill(mgr, a);
  show("A 55-token prompt takes 4 blocks; its 3 full blocks enter the prefix cache:", mgr,
       host);

  auto shared = tokens(48, 0);
  auto tail = tokens(12, 1000);
  shared.insert(shared.end(), tail.begin(), tail.end());
  kv_sequence b(2, shared, block_size);
  run_prefill(mgr, b);
  show("\nA second prompt with the same first 48 tokens shares 3 blocks:", mgr, host);

  kv_sequence c = mgr.fork(b, 3);
  std::printf("\nFork of sequence 2 into 3 shares all of its blocks %s\n", blocks_of(c).c_str());
  c.append_token(7);
  auto copies = mgr.allocate_slots(c, 1);
  c.add_computed_tokens(1);
  std::printf("  its first decode writes into the shared last block: copy %d -> %d, blocks %s\n",
              copies->front().src, copies->front().dst, blocks_of(c).c_str());
  show("", mgr, host);

  auto out = host.swap_out(a.id(), a.table().blocks());
  mgr.free(a);
  std::printf("\nSequence 1 swapped out: %zu blocks copied to host blocks\n", out->size());
  show("", mgr, host);

  host.release(a.id());
  for (kv_sequence* s : {&b, &c})
    mgr.free(*s);
  show("\nAll finished; full blocks stay cached for later prompts:", mgr, host);

  auto broken = check_invariants(mgr.pool(), std::vector<const block_table*>{});
  for (auto& line : check_invariants(host))
    broken.push_back(line);
  for (const auto& line : broken)
    std::printf("broken invariant: %s\n", line.c_str());
  std::printf("\ninvariants: %s\n", broken.empty() ? "sound" : "BROKEN");
  return broken.empty() ? 0 : 1;
}
