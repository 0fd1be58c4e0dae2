// kvactor-bench-kernels: kernel throughput next to a device memcpy of the
// same bytes, measured in the same run on the same device.
//   GB/s         bytes the kernel must move / time (K+V read for attention,
//                rows written for cache write, blocks copied for swap)
//   memcpy_GB/s  the same number of bytes copied by the device (copy_async:
//                memcpy over the pool on the CPU, cudaMemcpyAsync on CUDA;
//                for a swap, device to pinned host memory)
//   ratio        GB/s / memcpy_GB/s (the figure that counts)
// and on the CPU read_bandwidth: a plain read over the same threads, the
// bound the products of a decode step stream their weights against
// (kvactor-bench-model reports their ratio to it).
//
//   kvactor-bench-kernels [--device=cpu|cuda|cuda:N] [--tiny] [benchmark flags]
// --device=cuda also runs decode with and without split-K (split:0|1, the
// `splits` counter is the launcher's plan); --tiny: a few small cases, one
// iteration each (the CUDA shim's run in the test suite).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/bench/device_memory.hpp"
#include "kernels/bench/read_bandwidth.hpp"
#include "kernels/cpu_device.hpp"
#include "kernels/cuda/attention_split.hpp"
#include "kernels/kv_cache.hpp"
#include "kernels/ops.hpp"

namespace kvactor::kernels {
namespace {

// Llama-3-8B-like attention: 32 query heads over 8 KV heads of 128 dims.
constexpr int32_t num_heads = 32, num_kv_heads = 8, head_dim = 128, block_size = 16;
constexpr int32_t head_group = 4;  // query heads per block of the CUDA kernel (GQA ratio 4)

struct bench_setup {
  std::unique_ptr<device> dev;
  bool tiny = false;
  int32_t reps = 1;  // kernel launches (and copies) per timed iteration
};

bench_setup& setup() {
  static bench_setup s;
  return s;
}

device& bench_device() { return *setup().dev; }
bool on_cuda() { return bench_device().kind() == device_kind::cuda; }

// Runs `kernel` (which enqueues work moving `bytes` on `stream`) and a copy
// of the same bytes from `src` by the device, reps times each, alternately,
// so both see the same machine load, and reports both rates.
// NOTE: manual time: the benchmark time is the kernel's only; wall time of
// reps back-to-back launches then one wait (on CUDA this amortises the wait
// but includes launch overhead).
template <class Kernel>
void run_against_memcpy(benchmark::State& state, stream_id stream, memory_kind dst_kind,
                        const void* src, size_t bytes, Kernel kernel) {
  device& dev = bench_device();
  auto dst = dev.allocate(dst_kind, bytes);
  if (!dst || !bench::fill_bytes(dev, dst->data(), bytes, 0)) {  // fault the pages in first
    state.SkipWithError("memcpy buffer does not fit");
    return;
  }
  const int32_t reps = setup().reps;
  using clock = std::chrono::steady_clock;
  double kernel_s = 0.0, copy_s = 0.0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    for (int32_t r = 0; r < reps; ++r) kernel();
    dev.record(stream)->wait();
    const auto t1 = clock::now();
    for (int32_t r = 0; r < reps; ++r) dev.copy_async(stream, dst->data(), src, bytes);
    dev.record(stream)->wait();
    const auto t2 = clock::now();
    const double k = std::chrono::duration<double>(t1 - t0).count() / reps;
    state.SetIterationTime(k);
    kernel_s += k;
    copy_s += std::chrono::duration<double>(t2 - t1).count() / reps;
  }
  const double n = static_cast<double>(state.iterations());
  const double gbps = static_cast<double>(bytes) * n / kernel_s / 1e9;
  const double copy_gbps = static_cast<double>(bytes) * n / copy_s / 1e9;
  state.counters["GB/s"] = gbps;
  state.counters["memcpy_GB/s"] = copy_gbps;
  state.counters["ratio"] = gbps / copy_gbps;
}

// args: batch, context, dtype[, split]
void decode_attention(benchmark::State& state) {
  const auto batch = static_cast<int32_t>(state.range(0));
  const auto context = static_cast<int32_t>(state.range(1));
  const auto type = static_cast<dtype>(state.range(2));
  const bool split = on_cuda() && state.range(3) != 0;  // the CPU rows have no split argument
  device& dev = bench_device();
  const int32_t blocks_per_seq = (context + block_size - 1) / block_size;
  const kv_cache_shape shape{.num_layers = 1,
                             .num_blocks = int64_t{batch} * blocks_per_seq,
                             .block_size = block_size,
                             .num_kv_heads = num_kv_heads,
                             .head_dim = head_dim,
                             .type = type};
  auto cache = allocate_kv_cache(dev, memory_kind::device, shape);
  if (!cache ||
      !bench::fill_random(dev, cache->view.base, static_cast<size_t>(shape.total_bytes()), type)) {
    state.SkipWithError("cache does not fit");
    return;
  }
  // scattered tables: a random permutation of the pool
  std::vector<int32_t> tables(static_cast<size_t>(shape.num_blocks));
  std::iota(tables.begin(), tables.end(), 0);
  std::shuffle(tables.begin(), tables.end(), std::mt19937(3));
  const size_t q_bytes = static_cast<size_t>(batch) * num_heads * head_dim * dtype_size(type);
  auto d_tables = bench::upload(dev, tables);
  auto d_lens = bench::upload(dev, std::vector<int32_t>(static_cast<size_t>(batch), context));
  auto query = dev.allocate(memory_kind::device, q_bytes);
  auto out = dev.allocate(memory_kind::device, q_bytes);
  if (!d_tables || !d_lens || !query || !out ||
      !bench::fill_random(dev, query->data(), q_bytes, type)) {
    state.SkipWithError("inputs do not fit");
    return;
  }
  paged_attention_params p{out->data(),
                           query->data(),
                           cache->view.k(0),
                           cache->view.v(0),
                           static_cast<const int32_t*>(d_tables->data()),
                           static_cast<const int32_t*>(d_lens->data()),
                           nullptr,
                           batch,
                           batch,
                           num_heads,
                           num_kv_heads,
                           head_dim,
                           block_size,
                           blocks_per_seq,
                           1.0f / std::sqrt(float{head_dim}),
                           type};
  if (split) p.workspace = dev.split_workspace(streams::compute);
  const size_t kv_bytes = size_t{static_cast<uint32_t>(batch)} * static_cast<uint32_t>(context) *
                          num_kv_heads * head_dim * 2 * dtype_size(type);
  run_against_memcpy(state, streams::compute, memory_kind::device, cache->view.base, kv_bytes,
                     [&] { paged_attention(dev, streams::compute, p); });
  // The launcher's plan (kernels/cuda/kernels.cu: attention_split_of).
  state.counters["splits"] =
    split ? plan_attention_split(batch, num_heads / head_group,
                                 int64_t{blocks_per_seq} * block_size, p.workspace.num_sms)
              .num_splits
          : 1;
}

// args: tokens, dtype
void cache_write_bench(benchmark::State& state) {
  const auto tokens = static_cast<int32_t>(state.range(0));
  const auto type = static_cast<dtype>(state.range(1));
  device& dev = bench_device();
  const size_t row = size_t{num_kv_heads} * head_dim * dtype_size(type);
  const int64_t num_slots = int64_t{tokens} * 4;
  const size_t cache_bytes = static_cast<size_t>(num_slots) * row,
               in_bytes = static_cast<size_t>(tokens) * row;
  auto k_cache = dev.allocate(memory_kind::device, cache_bytes),
       v_cache = dev.allocate(memory_kind::device, cache_bytes);
  // K rows then V rows: also the memcpy's source
  auto key = dev.allocate(memory_kind::device, 2 * in_bytes);
  std::vector<int64_t> slots(static_cast<size_t>(num_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(5));
  slots.resize(static_cast<size_t>(tokens));
  auto d_slots = bench::upload(dev, slots);
  if (!k_cache || !v_cache || !key || !d_slots ||
      !bench::fill_random(dev, key->data(), 2 * in_bytes, type)) {
    state.SkipWithError("buffers do not fit");
    return;
  }
  const cache_write_params p{key->data(),
                             static_cast<char*>(key->data()) + in_bytes,
                             k_cache->data(),
                             v_cache->data(),
                             static_cast<const int64_t*>(d_slots->data()),
                             tokens,
                             num_kv_heads,
                             head_dim,
                             type};
  run_against_memcpy(state, streams::compute, memory_kind::device, key->data(), 2 * in_bytes,
                     [&] { cache_write(dev, streams::compute, p); });
}

// args: blocks per swap; 4 layers of bf16 blocks (32 KiB per layer and K|V),
// device pool -> pinned host pool, against a device-to-pinned copy.
void swap_out_bench(benchmark::State& state) {
  const auto num_pairs = static_cast<int32_t>(state.range(0));
  device& dev = bench_device();
  const kv_cache_shape device_shape{.num_layers = 4,
                                    .num_blocks = int64_t{num_pairs} * 2,
                                    .block_size = block_size,
                                    .num_kv_heads = num_kv_heads,
                                    .head_dim = head_dim,
                                    .type = dtype::bf16};
  kv_cache_shape host_shape = device_shape;
  host_shape.num_blocks = num_pairs;
  auto gpu = allocate_kv_cache(dev, memory_kind::device, device_shape);
  auto host = allocate_kv_cache(dev, memory_kind::pinned_host, host_shape);
  if (!gpu || !host ||
      !bench::fill_bytes(dev, gpu->view.base, static_cast<size_t>(device_shape.total_bytes()), 1) ||
      !bench::fill_bytes(dev, host->view.base, static_cast<size_t>(host_shape.total_bytes()), 0)) {
    state.SkipWithError("pools do not fit");
    return;
  }
  std::vector<block_pair> pairs;
  // every other device block
  for (int32_t i = 0; i < num_pairs; ++i) pairs.push_back({2 * i + 1, i});
  const auto bytes =
    static_cast<size_t>(num_pairs * 2 * device_shape.num_layers * device_shape.block_bytes());
  run_against_memcpy(state, streams::swap_out, memory_kind::pinned_host, gpu->view.base, bytes,
                     [&] { swap_blocks(dev, streams::swap_out, gpu->view, host->view, pairs); });
  // Device calls one swap makes on this device (CUDA: kernel launches), and
  // on CUDA as it was with one cudaMemcpyAsync per (block, layer, K|V).
  state.counters["calls"] = swap_calls(dev.kind(), pairs.size());
  state.counters["cuda_calls"] = swap_calls(device_kind::cuda, pairs.size());
  state.counters["cuda_calls_per_copy"] =
    static_cast<double>(pairs.size()) * 2 * device_shape.num_layers;
}

// args: MiB read (CPU device only)
void read_bandwidth(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const std::vector<uint64_t> buffer = bench::read_buffer(bytes);
  thread_pool& pool = static_cast<cpu_device&>(bench_device()).pool();
  uint64_t sink = 0;
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = bench::timed_read(pool, buffer.data(), bytes, sink);
    state.SetIterationTime(s);
    seconds += s;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] =
    static_cast<double>(bytes) * static_cast<double>(state.iterations()) / seconds / 1e9;
}

void register_all() {
  const bool tiny = setup().tiny, cuda = on_cuda();
  auto common = [tiny](benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (tiny) b->Iterations(1);
  };
  if (!cuda && !tiny)
    benchmark::RegisterBenchmark("read_bandwidth", read_bandwidth)
        ->Arg(64)->Arg(512)->ArgNames({"MiB"})->UseManualTime()->Unit(benchmark::kMillisecond);

  auto* decode = benchmark::RegisterBenchmark("decode_attention", decode_attention);
  const std::vector<int64_t> batches =
    tiny ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 4, 16, 64};
  const std::vector<int64_t> contexts = tiny   ? std::vector<int64_t>{1100}
                                        : cuda ? std::vector<int64_t>{512, 4096, 32768}
                                               : std::vector<int64_t>{128, 512, 1024, 4096};
  for (int64_t type : {int64_t{0}, int64_t{2}})
    for (int64_t batch : batches)
      for (int64_t context : contexts) {
        if (!cuda) decode->Args({batch, context, type});
        else
          for (int64_t split : {0, 1}) decode->Args({batch, context, type, split});
      }
  decode->ArgNames(cuda ? std::vector<std::string>{"batch", "context", "dtype", "split"}
                        : std::vector<std::string>{"batch", "context", "dtype"});
  common(decode);

  auto* write = benchmark::RegisterBenchmark("cache_write_bench", cache_write_bench);
  write
    ->ArgsProduct({tiny ? std::vector<int64_t>{16} : std::vector<int64_t>{16, 256, 4096}, {0, 2}})
    ->ArgNames({"tokens", "dtype"});
  common(write);

  auto* swap = benchmark::RegisterBenchmark("swap_out_bench", swap_out_bench);
  for (int64_t blocks : tiny ? std::vector<int64_t>{16, 300} : std::vector<int64_t>{16, 128, 1024})
    swap->Arg(blocks);
  swap->ArgNames({"blocks"});
  common(swap);
}

// Takes --device=... and --tiny out of argv (the rest is Google Benchmark's).
bool parse(int& argc, char** argv) {
  std::string name = "cpu";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) name = argv[i] + 9;
    else if (std::strcmp(argv[i], "--tiny") == 0) setup().tiny = true;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  device_options options;
  if (name == "cpu")
    options = device_options{.device_bytes = int64_t{8} << 30, .pinned_bytes = int64_t{4} << 30};
  auto dev = make_device(name, options);
  if (!dev) {
    std::fprintf(stderr, "kvactor-bench-kernels: %s\n", dev.error().message.c_str());
    return false;
  }
  setup().dev = std::move(*dev);
  setup().reps = setup().dev->kind() == device_kind::cuda && !setup().tiny ? 10 : 1;
  std::printf("device: %s\n", setup().dev->name().c_str());
  return true;
}

} // namespace
} // namespace kvactor::kernels

int main(int argc, char** argv) {
  if (!kvactor::kernels::parse(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  kvactor::kernels::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  kvactor::kernels::setup().dev.reset();
  return 0;
}
