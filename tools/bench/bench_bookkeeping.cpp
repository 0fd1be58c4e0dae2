// kvactor-bench-bookkeeping: the cost of the block pool's verbs, per operation.

#include "actors/block_manager.hpp"
#include "actors/kv_ledger.hpp"
#include "actors/scheduler.hpp"

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

// One decode step's planning with `n` running sequences: the scheduler's
// policy plus the block manager's reservation, and applying the output (the
// pure work behind the scheduler and block-manager actors; no messaging).
void plan_decode_step(benchmark::State& state) {
  const auto n = static_cast<int32_t>(state.range(0));
  scheduler_config config;
  config.max_num_batched_tokens = 4 * n;
  config.max_num_seqs = n;
  constexpr int32_t warmup = 40, steps = 2000, max_tokens = warmup + steps + 8;
  const int32_t num_blocks = n * ((100 + max_tokens) / block_size + 2);
  kv_ledger ledger(num_blocks, block_size);
  scheduler sched(config, num_blocks, 0, block_size);
  for (int32_t i = 0; i < n; ++i)
    sched.add(sequence(seq_id(i + 1), tokens(100, 1000 * i), block_size, 0, uint64_t(i)),
              {max_tokens, true, {}});
  auto run_step = [&] {
    auto p = sched.begin_step();
    while (!p.plan)
      p = sched.on_reservation(ledger.reserve(p.reserve));
    step_output out{p.plan->step_id, {}};
    for (const auto& s : p.plan->seqs)
      out.sampled.push_back({s.id, 7});
    sched.update_from_output(out);
    for (const auto& cmd : sched.take_commands())
      benchmark::DoNotOptimize(cmd);
  };
  for (int i = 0; i < warmup; ++i) // the prefills, in chunks
    run_step();
  for (auto _ : state)
    run_step();
  state.counters["us_per_step"] = benchmark::Counter(
    double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(plan_decode_step)->Arg(64)->Arg(256)->Iterations(2000);

} // namespace

BENCHMARK_MAIN();
