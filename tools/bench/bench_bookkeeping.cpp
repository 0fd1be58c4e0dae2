// kvactor-bench-bookkeeping: the cost of the block pool's verbs, per operation.

#include "actors/core/block_allocator.hpp"
#include "actors/core/kv_ledger.hpp"
#include "actors/core/scheduler.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

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
  block_allocator mgr(4096, block_size);
  kv_sequence seq(1, tokens(8), block_size);
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
      seq = kv_sequence(1, tokens(8), block_size);
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
  block_allocator mgr(4096, block_size);
  kv_sequence first(1, tokens(num_tokens + 1), block_size);
  mgr.allocate_slots(first, first.num_tokens());
  first.add_computed_tokens(first.num_tokens());
  mgr.cache_computed_blocks(first);
  kv_sequence probe(2, tokens(num_tokens + 1), block_size);
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
  block_allocator mgr(4096, block_size);
  token_id next = 0;
  for (auto _ : state) {
    kv_sequence seq(1, tokens(num_tokens, next), block_size);
    next += num_tokens; // no hits: every prompt is new
    mgr.allocate_slots(seq, num_tokens);
    seq.add_computed_tokens(num_tokens);
    mgr.cache_computed_blocks(seq);
    mgr.free(seq);
  }
  state.SetItemsProcessed(state.iterations() * num_tokens / block_size);
}
BENCHMARK(prefill_cycle)->Arg(512);

// Decode steps with `n` running sequences of a 100-token prompt, generating
// up to 2,048 tokens each.
struct decode_workload {
  static constexpr int32_t warmup = 40, steps = 2000, max_tokens = warmup + steps + 8;
  int32_t n;
  scheduler_config config;
  int32_t num_blocks;

  explicit decode_workload(int32_t num_seqs)
    : n(num_seqs), num_blocks(num_seqs * ((100 + max_tokens) / block_size + 2)) {
    config.max_num_batched_tokens = 4 * n;
    config.max_num_seqs = n;
  }
  scheduler make_scheduler() const {
    scheduler sched(config, num_blocks, 0, block_size);
    for (int32_t i = 0; i < n; ++i)
      sched.add(sequence(seq_id(i + 1), tokens(100, 1000 * i), 0, uint64_t(i)),
                {max_tokens, true, {}});
    return sched;
  }
};

using bench_clock = std::chrono::steady_clock;

double us_since(bench_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(bench_clock::now() - t0).count();
}

// Runs the steps and reports us_per_step (mean CPU time of a whole step) and
// p50_us (median wall time of the part of a step that run_step times and
// returns, which the machine's other load disturbs less). Clock reads cost
// about 0.07 us each here.
template <class Step>
void run_timed(benchmark::State& state, Step& run_step) {
  std::vector<double> us;
  us.reserve(size_t(state.max_iterations));
  for (auto _ : state)
    us.push_back(run_step());
  std::ranges::nth_element(us, us.begin() + ptrdiff_t(us.size() / 2));
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["us_per_step"] = benchmark::Counter(
    double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

step_output output_of(const step_plan& plan) {
  step_output out{plan.step_id, {}};
  out.sampled.reserve(plan.seqs.size());
  for (const auto& s : plan.seqs)
    out.sampled.push_back({s.id, 7});
  return out;
}

// One decode step's planning in full: the scheduler's policy, the block
// manager's reservation (kv_ledger: pool, prefix cache) and applying the
// output, with the output built here (the pure work behind the scheduler and
// block-manager actors; no messaging).
void plan_decode_step(benchmark::State& state) {
  const decode_workload w(static_cast<int32_t>(state.range(0)));
  kv_ledger ledger(w.num_blocks, block_size);
  scheduler sched = w.make_scheduler();
  auto run_step = [&] {
    const auto t0 = bench_clock::now();
    auto p = sched.begin_step();
    while (!p.plan)
      p = sched.on_reservation(ledger.reserve(p.reserve));
    sched.update_from_output(output_of(*p.plan));
    benchmark::DoNotOptimize(sched.take_commands());
    return us_since(t0);
  };
  for (int i = 0; i < w.warmup; ++i) // the prefills, in chunks
    run_step();
  run_timed(state, run_step);
}
BENCHMARK(plan_decode_step)->Arg(64)->Arg(256)->Iterations(decode_workload::steps);

// A stand-in for the block manager: grants every entry in full, with block
// ids from an endless supply, into a reply it reuses (a few loads and stores
// per entry, no pool, no prefix cache).
class trivial_ledger {
public:
  explicit trivial_ledger(int32_t num_seqs) : num_held_(size_t(num_seqs) + 1, 0) {}
  const reservation_result& reserve(const std::vector<reservation_entry>& entries) {
    reply_.granted.resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const reservation_entry& e = entries[i];
      granted_entry& g = reply_.granted[i];
      int32_t& held = num_held_[e.id];
      const int32_t end = e.num_computed + e.num_new_tokens;
      g.id = e.id;
      g.start = e.num_computed;
      g.num_new_tokens = e.num_new_tokens;
      g.blocks.num_kept = held;
      g.blocks.added.clear();
      for (; held * block_size < end; ++held)
        g.blocks.added.push_back(next_block_++);
    }
    return reply_;
  }

private:
  std::vector<int32_t> num_held_; // by sequence id
  block_id next_block_ = 0;
  reservation_result reply_;
};

// The pure policy of the same steps: the scheduler's calls (begin_step,
// on_reservation, update_from_output, take_commands) with trivial_ledger
// answering the reservations; no block pool, prefix cache or messaging.
// p50_us times the scheduler's calls only. us_per_step, the CPU time of the
// whole loop, also counts the stand-in's grants, filling the step output
// into a reused buffer, freeing the plan (the executor's in the runtime) and
// the clock reads: together about 2-3 us of a 256-sequence step.
void plan_policy_only(benchmark::State& state) {
  const decode_workload w(static_cast<int32_t>(state.range(0)));
  trivial_ledger ledger(w.n);
  scheduler sched = w.make_scheduler();
  step_output out;
  auto run_step = [&] {
    auto t0 = bench_clock::now();
    auto p = sched.begin_step();
    double us = us_since(t0);
    while (!p.plan) {
      const reservation_result& r = ledger.reserve(p.reserve);
      t0 = bench_clock::now();
      p = sched.on_reservation(r);
      us += us_since(t0);
    }
    out.step_id = p.plan->step_id;
    out.sampled.clear();
    for (const auto& s : p.plan->seqs)
      out.sampled.push_back({s.id, 7});
    t0 = bench_clock::now();
    sched.update_from_output(out);
    benchmark::DoNotOptimize(sched.take_commands());
    return us + us_since(t0);
  };
  for (int i = 0; i < w.warmup; ++i)
    run_step();
  run_timed(state, run_step);
}
BENCHMARK(plan_policy_only)->Arg(64)->Arg(256)->Iterations(decode_workload::steps);

} // namespace

BENCHMARK_MAIN();
