// kvactor-bench-kernels: CPU kernel throughput next to memcpy of the same
// bytes, measured in the same run on the same device threads.
//   GB/s         bytes the kernel must move / time (K+V read for attention,
//                rows written for cache write, blocks copied for swap)
//   memcpy_GB/s  the same number of bytes copied by memcpy over the pool
//   ratio        GB/s / memcpy_GB/s (the figure that counts)
// and read_bandwidth: a plain read over the same threads, the bound the
// products of a decode step stream their weights against
// (kvactor-bench-model reports their ratio to it).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/bench/read_bandwidth.hpp"
#include "kernels/cpu_device.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/ops.hpp"

namespace kvactor::kernels {
namespace {

// Llama-3-8B-like attention: 32 query heads over 8 KV heads of 128 dims.
constexpr int32_t num_heads = 32, num_kv_heads = 8, head_dim = 128, block_size = 16;

cpu_device& bench_device() {
  static cpu_device dev(device_options{.device_bytes = int64_t{8} << 30, .pinned_bytes = int64_t{4} << 30});
  return dev;
}

void fill_random(void* data, size_t bytes, dtype t) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t n = bytes / dtype_size(t);
  for (size_t i = 0; i < n; ++i) store_from_float(t, data, i, normal(rng));
}

// Runs `kernel` (which moves `bytes`) and a memcpy of the same bytes by the
// device's copy (memcpy split over the same pool) alternately, so both see the
// same machine load (this host is shared), and reports both rates.
// NOTE: manual time: the benchmark time is the kernel's time only.
template <class Kernel>
void run_against_memcpy(benchmark::State& state, cpu_device& dev, const void* src, size_t bytes, Kernel kernel) {
  auto dst = dev.allocate(memory_kind::device, bytes);
  if (!dst) {
    state.SkipWithError("memcpy buffer does not fit the arena");
    return;
  }
  std::memset(dst->data(), 0, bytes);  // fault the pages in first
  using clock = std::chrono::steady_clock;
  double kernel_s = 0.0, copy_s = 0.0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    kernel();
    const auto t1 = clock::now();
    dev.copy_async(streams::compute, dst->data(), src, bytes);
    dev.record(streams::compute)->wait();
    const auto t2 = clock::now();
    const double k = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(k);
    kernel_s += k;
    copy_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const double n = static_cast<double>(state.iterations());
  const double gbps = static_cast<double>(bytes) * n / kernel_s / 1e9;
  const double copy_gbps = static_cast<double>(bytes) * n / copy_s / 1e9;
  state.counters["GB/s"] = gbps;
  state.counters["memcpy_GB/s"] = copy_gbps;
  state.counters["ratio"] = gbps / copy_gbps;
}

// args: batch, context, dtype
void decode_attention(benchmark::State& state) {
  const auto batch = static_cast<int32_t>(state.range(0));
  const auto context = static_cast<int32_t>(state.range(1));
  const auto type = static_cast<dtype>(state.range(2));
  cpu_device& dev = bench_device();
  const int32_t blocks_per_seq = (context + block_size - 1) / block_size;
  const kv_cache_shape shape{.num_layers = 1, .num_blocks = int64_t{batch} * blocks_per_seq, .block_size = block_size,
                             .num_kv_heads = num_kv_heads, .head_dim = head_dim, .type = type};
  auto cache = allocate_kv_cache(dev, memory_kind::device, shape);
  if (!cache) {
    state.SkipWithError("cache does not fit the arena");
    return;
  }
  fill_random(cache->view.base, static_cast<size_t>(shape.total_bytes()), type);
  // scattered tables: a random permutation of the pool
  std::vector<int32_t> tables(static_cast<size_t>(shape.num_blocks));
  std::iota(tables.begin(), tables.end(), 0);
  std::shuffle(tables.begin(), tables.end(), std::mt19937(3));
  std::vector<int32_t> lens(static_cast<size_t>(batch), context);
  const size_t q_bytes = static_cast<size_t>(batch) * num_heads * head_dim * dtype_size(type);
  std::vector<uint8_t> query(q_bytes), out(q_bytes);
  fill_random(query.data(), q_bytes, type);
  const paged_attention_params p{out.data(), query.data(), cache->view.k(0), cache->view.v(0), tables.data(),
                                 lens.data(), nullptr, batch, batch, num_heads, num_kv_heads, head_dim, block_size,
                                 blocks_per_seq, 1.0f / std::sqrt(float{head_dim}), type};
  const size_t kv_bytes = size_t{static_cast<uint32_t>(batch)} * static_cast<uint32_t>(context) * num_kv_heads *
                          head_dim * 2 * dtype_size(type);
  run_against_memcpy(state, dev, cache->view.base, kv_bytes, [&] {
    paged_attention(dev, streams::compute, p);
    dev.record(streams::compute)->wait();
  });
}

// args: tokens, dtype
void cache_write_bench(benchmark::State& state) {
  const auto tokens = static_cast<int32_t>(state.range(0));
  const auto type = static_cast<dtype>(state.range(1));
  cpu_device& dev = bench_device();
  const size_t row = size_t{num_kv_heads} * head_dim * dtype_size(type);
  const int64_t num_slots = int64_t{tokens} * 4;
  std::vector<uint8_t> k_cache(static_cast<size_t>(num_slots) * row), v_cache(k_cache.size());
  std::vector<uint8_t> key(static_cast<size_t>(tokens) * row), value(key.size());
  fill_random(key.data(), key.size(), type);
  fill_random(value.data(), value.size(), type);
  std::vector<int64_t> slots(static_cast<size_t>(num_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(5));
  slots.resize(static_cast<size_t>(tokens));
  const cache_write_params p{key.data(), value.data(), k_cache.data(), v_cache.data(), slots.data(), tokens,
                             num_kv_heads, head_dim, type};
  std::vector<uint8_t> both(2 * key.size(), 1);  // the rows written, K and V
  run_against_memcpy(state, dev, both.data(), both.size(), [&] {
    cache_write(dev, streams::compute, p);
    dev.record(streams::compute)->wait();
  });
}

// args: blocks per swap; 4 layers of bf16 blocks (32 KiB per layer and K|V)
void swap_out_bench(benchmark::State& state) {
  const auto num_pairs = static_cast<int32_t>(state.range(0));
  cpu_device& dev = bench_device();
  const kv_cache_shape device_shape{.num_layers = 4, .num_blocks = int64_t{num_pairs} * 2, .block_size = block_size,
                                    .num_kv_heads = num_kv_heads, .head_dim = head_dim, .type = dtype::bf16};
  kv_cache_shape host_shape = device_shape;
  host_shape.num_blocks = num_pairs;
  auto gpu = allocate_kv_cache(dev, memory_kind::device, device_shape);
  auto host = allocate_kv_cache(dev, memory_kind::pinned_host, host_shape);
  if (!gpu || !host) {
    state.SkipWithError("pools do not fit the arenas");
    return;
  }
  std::memset(gpu->view.base, 1, static_cast<size_t>(device_shape.total_bytes()));
  std::memset(host->view.base, 0, static_cast<size_t>(host_shape.total_bytes()));
  std::vector<block_pair> pairs;
  for (int32_t i = 0; i < num_pairs; ++i) pairs.push_back({2 * i + 1, i});  // every other device block
  const auto bytes = static_cast<size_t>(num_pairs * 2 * device_shape.num_layers * device_shape.block_bytes());
  run_against_memcpy(state, dev, gpu->view.base, bytes,
                     [&] { swap_blocks(dev, streams::swap_out, gpu->view, host->view, pairs)->wait(); });
  // Device calls one swap makes: here (CPU), on CUDA (kernel launches), and
  // on CUDA as it was with one cudaMemcpyAsync per (block, layer, K|V).
  state.counters["calls"] = swap_calls(device_kind::cpu, pairs.size());
  state.counters["cuda_calls"] = swap_calls(device_kind::cuda, pairs.size());
  state.counters["cuda_calls_per_copy"] = static_cast<double>(pairs.size()) * 2 * device_shape.num_layers;
}

// args: MiB read
void read_bandwidth(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const std::vector<uint64_t> buffer = bench::read_buffer(bytes);
  uint64_t sink = 0;
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = bench::timed_read(bench_device().pool(), buffer.data(), bytes, sink);
    state.SetIterationTime(s);
    seconds += s;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] = static_cast<double>(bytes) * static_cast<double>(state.iterations()) / seconds / 1e9;
}

void decode_args(benchmark::internal::Benchmark* b) {
  for (int64_t type : {int64_t{0}, int64_t{2}})
    for (int64_t batch : {1, 4, 16, 64})
      for (int64_t context : {128, 512, 1024, 4096}) b->Args({batch, context, type});
  b->ArgNames({"batch", "context", "dtype"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(read_bandwidth)->Arg(64)->Arg(512)->ArgNames({"MiB"})->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(decode_attention)->Apply(decode_args);
BENCHMARK(cache_write_bench)
    ->ArgsProduct({{16, 256, 4096}, {0, 2}})
    ->ArgNames({"tokens", "dtype"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(swap_out_bench)->Arg(16)->Arg(128)->Arg(1024)->ArgNames({"blocks"})->UseManualTime()->Unit(benchmark::kMicrosecond);

} // namespace
} // namespace kvactor::kernels

BENCHMARK_MAIN();
