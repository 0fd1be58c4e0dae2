// kvactor-bench-bookkeeping: the cost of the block pool's verbs, per operation.

#include "actors/block_manager.hpp"

#include <benchmark/benchmark.h>

#include <numeric>

using namespace kvactor;

namespace {

constexpr int32_t block_size = 16;

std::vector<token_id> tokens(int n, token_id first = 0) {
  std::vector<token_id> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// One block out and back in.
void allocate_free(benchmark::State& state) {
  block_pool pool(4096, block_size);
  for (auto _ : state) {
    auto b = pool.allocate(1);
    benchmark::DoNotOptimize(b);
    pool.release(b->front());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(allocate_free);

// One decode token: reserve its slot (a new block every block_size tokens),
// mark it computed, append the next token.
void append_slot(benchmark::State& state) {
  block_manager mgr(4096, block_size);
  sequence seq(1, tokens(8), block_size);
  mgr.allocate_slots(seq, 8);
  seq.add_computed_tokens(8);
  for (auto _ : state) {
    seq.append_token(7);
    auto copies = mgr.allocate_slots(seq, 1);
    benchmark::DoNotOptimize(copies);
    seq.add_computed_tokens(1);
    if (seq.num_tokens() == 4096 * block_size / 2) {
      state.PauseTiming();
      mgr.free(seq);
      seq = sequence(1, tokens(8), block_size);
      mgr.allocate_slots(seq, 8);
      seq.add_computed_tokens(8);
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(append_slot);

// Prefix lookup of a prompt whose blocks are all cached; items are blocks.
void prefix_lookup(benchmark::State& state) {
  const auto num_tokens = static_cast<int>(state.range(0));
  block_manager mgr(4096, block_size);
  sequence first(1, tokens(num_tokens + 1), block_size);
  mgr.allocate_slots(first, first.num_tokens());
  first.add_computed_tokens(first.num_tokens());
  mgr.cache_computed_blocks(first);
  sequence probe(2, tokens(num_tokens + 1), block_size);
  for (auto _ : state) {
    auto hit = mgr.find_cached_prefix(probe);
    benchmark::DoNotOptimize(hit);
  }
  state.SetItemsProcessed(state.iterations() * num_tokens / block_size);
}
BENCHMARK(prefix_lookup)->Arg(256)->Arg(4096);

// A whole prompt: hash its blocks, reserve, register in the prefix cache,
// free. Items are blocks.
void prefill_cycle(benchmark::State& state) {
  const auto num_tokens = static_cast<int>(state.range(0));
  block_manager mgr(4096, block_size);
  token_id next = 0;
  for (auto _ : state) {
    sequence seq(1, tokens(num_tokens, next), block_size);
    next += num_tokens; // no hits: every prompt is new
    mgr.allocate_slots(seq, num_tokens);
    seq.add_computed_tokens(num_tokens);
    mgr.cache_computed_blocks(seq);
    mgr.free(seq);
  }
  state.SetItemsProcessed(state.iterations() * num_tokens / block_size);
}
BENCHMARK(prefill_cycle)->Arg(512);

} // namespace

BENCHMARK_MAIN();
