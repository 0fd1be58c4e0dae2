// kvactor-bench-cuda-steps: decode steps of the CUDA forward pass, as the
// runtime runs them (bf16 matrices, activations and KV cache; the sampler on
// the device; one step at a time, each waited for), at several batch sizes:
// greedy steps as CUDA graphs and launched kernel by kernel, and sampled
// steps (temperature 0.8, top_p 0.95) as graphs. The three run alternately,
// each figure the median of --reps runs of --steps steps. Also: the
// launches of a kernel-by-kernel step (kernels and cuBLAS products) and the
// rate at which the graph steps stream the matrices (their bytes x steps/s).
//
//   kvactor-bench-cuda-steps [--model=DIR] [--context=512] [--steps=50] [--reps=5]
//                            [--batches=1,16,64]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "model/cuda/cuda_transformer.hpp"
#include "model/device_sampling.hpp"
#include "model/forward/transformer.hpp"
#include "model/model_folder.hpp"

using namespace kvactor;

namespace {

struct options {
  std::string model = KVACTOR_TINY_MODEL_DIR;
  int context = 512; // tokens already cached per sequence
  int steps = 50;    // steps per timed run
  int reps = 5;
  std::vector<int> batches{1, 16, 64};
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view key) -> const char* {
      return a.substr(0, key.size()) == key ? argv[i] + key.size() : nullptr;
    };
    if (const char* v = value("--model=")) {
      o.model = v;
    } else if (const char* v2 = value("--context=")) {
      o.context = std::atoi(v2);
    } else if (const char* v3 = value("--steps=")) {
      o.steps = std::atoi(v3);
    } else if (const char* v4 = value("--reps=")) {
      o.reps = std::atoi(v4);
    } else if (const char* v5 = value("--batches=")) {
      o.batches.clear();
      std::stringstream in(v5);
      for (std::string item; std::getline(in, item, ',');)
        o.batches.push_back(std::atoi(item.c_str()));
    } else {
      std::fprintf(stderr, "usage: kvactor-bench-cuda-steps [--model=DIR] [--context=512] "
                           "[--steps=50] [--reps=5] [--batches=1,16,64]\n");
      return false;
    }
  }
  return o.context > 0 && o.steps > 0 && o.reps > 0 && !o.batches.empty() &&
         std::ranges::all_of(o.batches, [](int b) { return b > 0; });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kvactor-bench-cuda-steps: %s\n", what.c_str());
  std::exit(1);
}

// One step through the device sampler, waited for.
void run_step(model::transformer& tf, const std::shared_ptr<const model::forward_batch>& batch,
              const model::device_sampling_batch& sampling) {
  std::promise<void> done;
  const status s = tf.enqueue_sampled(batch, sampling,
                                      [&](std::span<const kernels::gpu::sampled_row>) {
                                        done.set_value();
                                      });
  if (!s) die(s.error().message);
  done.get_future().wait();
}

// Steps per second of `steps` steps.
double time_steps(model::transformer& tf, const std::shared_ptr<const model::forward_batch>& b,
                  const model::device_sampling_batch& sampling, int steps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) run_step(tf, b, sampling);
  return steps / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes of the matrices one decode step reads whole (bf16): every
// projection and the LM head.
int64_t matrix_bytes(const model::model_weights& w) {
  int64_t total = w.lm_head().num_elements() * 2;
  for (const model::layer_weights& l : w.layers())
    for (const model::weight_view* v :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      total += v->num_elements() * 2;
  return total;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  auto m = model::load_model_folder(o.model, model::dtype::bf16);
  if (!m) die(m.error().message);
  const int32_t bs = 16;
  const int max_batch = *std::ranges::max_element(o.batches);
  const int blocks_per_seq = (o.context + 1 + bs - 1) / bs;
  const int64_t num_blocks = int64_t{max_batch} * blocks_per_seq;
  const model::forward_limits limits{max_batch, max_batch};
  model::forward_limits eager_limits = limits;
  eager_limits.max_cuda_graphs = 0;
  const kernels::kv_cache_shape shape =
    model::transformer::cache_shape(m->config, num_blocks, bs, kernels::dtype::bf16);
  constexpr int64_t fill_bytes = int64_t{1} << 22;
  kernels::device_options dopt;
  dopt.pinned_bytes =
    2 * model::transformer::pinned_host_bytes(m->config, limits, bs) + fill_bytes + (1 << 20);
  auto dev = kernels::make_device("cuda", dopt);
  if (!dev) die(dev.error().message);
  auto cache = kernels::allocate_kv_cache(**dev, kernels::memory_kind::device, shape);
  if (!cache) die("cannot allocate " + std::to_string(shape.total_bytes()) + " bytes of KV cache");
  { // every element 0.01 in bf16
    auto fill = (*dev)->allocate(kernels::memory_kind::pinned_host, fill_bytes);
    if (!fill) die("no pinned memory");
    std::fill_n(static_cast<uint16_t*>(fill->data()), fill_bytes / 2, uint16_t{0x3c24});
    auto* base = static_cast<std::byte*>(cache->view.base);
    for (int64_t at = 0; at < shape.total_bytes(); at += fill_bytes)
      (*dev)->copy_async(kernels::streams::compute, base + at, fill->data(),
                         size_t(std::min(fill_bytes, shape.total_bytes() - at)));
    (*dev)->synchronize();
  }
  auto graphs = model::transformer::create(m->config, m->weights, **dev, cache->view, limits,
                                           model::dtype::bf16);
  auto eager = model::transformer::create(m->config, m->weights, **dev, cache->view, eager_limits,
                                          model::dtype::bf16);
  if (!graphs || !eager) die((graphs ? eager : graphs).error().message);
  const auto& eager_cuda = dynamic_cast<const model::cuda_transformer&>(**eager);

  std::printf("model %s: hidden %lld, %lld layers, %lld/%lld heads of %lld, intermediate %lld, "
              "vocab %lld; bf16 matrices, activations and KV cache; context %d\n",
              o.model.c_str(), (long long)m->config.hidden_size,
              (long long)m->config.num_hidden_layers, (long long)m->config.num_attention_heads,
              (long long)m->config.num_key_value_heads, (long long)m->config.head_dim,
              (long long)m->config.intermediate_size, (long long)m->config.vocab_size, o.context);
  const int64_t weight_bytes = matrix_bytes(m->weights);
  std::printf("%.1f MB of matrices per step; medians of %d runs of %d steps\n",
              double(weight_bytes) / 1e6, o.reps, o.steps);
  std::printf("%-6s %10s %11s %7s %10s %9s %12s %9s\n", "batch", "graphs ms", "launched ms",
              "ratio", "launches", "sampled ms", "sampled cost", "weights GB/s");

  std::vector<int32_t> tokens(static_cast<size_t>(max_batch));
  for (int i = 0; i < max_batch; ++i)
    tokens[size_t(i)] = (i * 37 + 5) % int32_t(m->config.vocab_size);
  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(max_batch));
  for (int s = 0; s < max_batch; ++s) // the sequences' blocks interleaved
    for (int b = 0; b < blocks_per_seq; ++b) tables[size_t(s)].push_back(b * max_batch + s);
  model::sampling_params greedy_params, sampled_params;
  greedy_params.temperature = 0;
  sampled_params.temperature = 0.8f;
  sampled_params.top_p = 0.95f;
  const auto vocab = static_cast<int32_t>(m->config.vocab_size);
  for (int b : o.batches) {
    // NOTE: every step decodes at position `context` of each sequence
    // (rewriting the same slot): the shape repeats, as steady decoding's does.
    std::vector<model::sequence_chunk> chunks;
    for (int s = 0; s < b; ++s)
      chunks.push_back({o.context, std::span<const int32_t>(tokens).subspan(size_t(s), 1),
                        tables[size_t(s)], true});
    const auto batch =
      std::make_shared<const model::forward_batch>(model::forward_batch::build(chunks, bs));
    model::device_sampling_batch greedy, sampled;
    for (int s = 0; s < b; ++s) {
      greedy.add(greedy_params, 0, nullptr, -1, vocab);
      sampled.add(sampled_params, uint64_t(s), nullptr, -1, vocab);
    }
    for (int w = 0; w < 3; ++w) { // warm-up: the graph captured at the second step
      run_step(**graphs, batch, greedy);
      run_step(**eager, batch, greedy);
    }
    std::vector<double> on, off, with_sampling;
    for (int r = 0; r < o.reps; ++r) {
      on.push_back(time_steps(**graphs, batch, greedy, o.steps));
      off.push_back(time_steps(**eager, batch, greedy, o.steps));
      with_sampling.push_back(time_steps(**graphs, batch, sampled, o.steps));
    }
    const double graph_ms = 1e3 / median(on), eager_ms = 1e3 / median(off),
                 sampled_ms = 1e3 / median(with_sampling);
    std::printf("%-6d %10.3f %11.3f %7.2f %10lld %9.3f %11.2fx %9.1f\n", b, graph_ms, eager_ms,
                eager_ms / graph_ms, (long long)eager_cuda.last_step_launches(), sampled_ms,
                sampled_ms / graph_ms, double(weight_bytes) / (graph_ms * 1e-3) / 1e9);
  }
  const auto& graphs_cuda = dynamic_cast<const model::cuda_transformer&>(**graphs);
  std::printf("graph steps %lld, graphs %d; launch by launch: %lld graph steps\n",
              (long long)graphs_cuda.graph_steps(), graphs_cuda.num_graphs(),
              (long long)eager_cuda.graph_steps());
  return graphs_cuda.graph_steps() > 0 && eager_cuda.graph_steps() == 0 ? 0 : 1;
}
