// kvactor-bench-model: tokens/s of the CPU forward pass on a model folder
// (default: the tiny model the build writes), for a prefill step and for
// decode steps at several batch sizes, with the shares of step time spent
// in the matrix products (linear), the attention (cache write + paged
// attention) and outside both. Each figure is the median of --reps runs.
// Decode steps also report the rate at which their products stream the
// weights (matrix bytes x steps/s) and its ratio to a plain read of as many
// bytes over as many threads, run alternately with the steps.
//
//   kvactor-bench-model [--model=DIR] [--context=128] [--prefill=512] [--steps=10]
//                       [--reps=5] [--threads=0]
//                       [--weights=f32|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q2_k|q3_k|q4_k|q5_k|q6_k
//                                  |iq4_nl|iq4_xs]
//                       [--activations=f32|bf16] [--kv-dtype=f32|bf16] [--quant-kernel=NAME]
// (--activations=bf16: the products take bf16 rows and bf16 matrices, on the
// CPU's bf16 instructions; the matrices are loaded in bf16. q8_0 ... iq4_xs:
// the checkpoint's matrices quantised at load, products on integer instructions.
// --quant-kernel=avx512_vnni|amx_int8|...: every integer product on that
// kernel, for comparing two in one run, e.g. AMX-INT8 against AVX-512 VNNI.)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>
#include <functional>
#include <optional>
#include <thread>

#include "kernels/bench/read_bandwidth.hpp"
#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "model/forward/layers.hpp"
#include "model/forward/transformer.hpp"
#include "model/model_folder.hpp"
#include "model/quant/quant_kernels.hpp"

using namespace kvactor;

namespace {

struct options {
  std::string model = KVACTOR_TINY_MODEL_DIR;
  int context = 128;  // tokens already cached per sequence when decoding
  int prefill = 512;  // prompt tokens of the prefill step
  int steps = 10;     // timed decode steps per run
  int reps = 5;
  int threads = 0;
  model::dtype weights = model::dtype::f32; // matrices in memory
  std::optional<model::quant_format> quantize; // ... or quantised at load
  std::optional<model::layers::quant_isa> quant_kernel; // forced integer kernel
  model::dtype activations = model::dtype::f32; // the products' input rows
  kernels::dtype kv = kernels::dtype::f32;   // KV cache elements
};

struct figures {
  double tokens_per_second;
  double outside_share; // of step time, outside linear and attention
  double linear_share;
  double attention_share;
  double steps_per_second;
  double read_seconds; // of the plain read beside the steps (0: none)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_step(model::transformer& tf, const model::forward_batch& batch) {
  const auto logits = tf.run(batch);
  if (!logits) {
    std::fprintf(stderr, "%s\n", logits.error().message.c_str());
    std::exit(1);
  }
}

// read: a plain read to time after each run (or none).
figures measure(model::transformer& tf, const model::forward_batch& batch, int num_steps, int reps,
                const std::function<double()>& read = {}) {
  run_step(tf, batch); // warm-up
  std::vector<double> tps, outside, linear, attention, sps, reads;
  for (int r = 0; r < reps; ++r) {
    tf.reset_profile();
    tf.set_profiling(true);
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < num_steps; ++s) run_step(tf, batch);
    const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tf.set_profiling(false);
    const model::forward_profile& p = tf.profile();
    tps.push_back(batch.num_tokens() * double(num_steps) / wall);
    sps.push_back(double(num_steps) / wall);
    outside.push_back(1.0 - (p.blas_seconds + p.attention_seconds) / p.total_seconds);
    linear.push_back(p.blas_seconds / p.total_seconds);
    attention.push_back(p.attention_seconds / p.total_seconds);
    reads.push_back(read ? read() : 0.0);
  }
  return {median(tps),       median(outside), median(linear),
          median(attention), median(sps),     median(reads)};
}

// The matrices one decode step reads whole: every projection and the LM
// head (the embedding only gives rows).
std::vector<const model::weight_view*> step_matrices(const model::model_weights& w) {
  std::vector<const model::weight_view*> all{&w.lm_head()};
  for (const model::layer_weights& l : w.layers())
    for (const model::weight_view* v :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      all.push_back(v);
  return all;
}

// Their bytes as the products read them: as stored, repacked if quantised
// (stored so or at load).
int64_t matrix_bytes(const model::model_weights& w, std::optional<model::quant_format> quantize) {
  int64_t total = 0;
  for (const model::weight_view* v : step_matrices(w)) {
    const std::optional<model::quant_format> q = v->quant ? v->quant : quantize;
    if (q) total += int64_t(model::quantized_matrix::packed_bytes(*q, v->rows(), v->cols()));
    else total += v->num_elements() * (v->type == model::dtype::bf16 ? 2 : 4);
  }
  return total;
}

// What the matrices are in memory: a GGUF file's stored formats
// ("q4_k + q6_k"), the format they are quantised to at load, bf16 or fp32.
std::string matrices_name(const model::model_weights& w, const options& o) {
  std::string names;
  for (model::quant_format f : model::all_quant_formats())
    for (const model::weight_view* v : step_matrices(w))
      if (v->quant == f) {
        if (!names.empty()) names += " + ";
        names += model::quant_name(f);
        break;
      }
  if (!names.empty()) return names;
  if (o.quantize) return std::string(model::quant_name(*o.quantize));
  return o.weights == model::dtype::bf16 ? "bf16" : "fp32";
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view key) -> const char* {
      return a.substr(0, key.size()) == key ? argv[i] + key.size() : nullptr;
    };
    if (const char* v = value("--model=")) o.model = v;
    else if (const char* v2 = value("--context=")) o.context = std::atoi(v2);
    else if (const char* v3 = value("--prefill=")) o.prefill = std::atoi(v3);
    else if (const char* v4 = value("--steps=")) o.steps = std::atoi(v4);
    else if (const char* v5 = value("--reps=")) o.reps = std::atoi(v5);
    else if (const char* v6 = value("--threads=")) o.threads = std::atoi(v6);
    else if (a == "--weights=bf16") o.weights = model::dtype::bf16;
    else if (a == "--weights=f32") o.weights = model::dtype::f32;
    else if (const char* v8 = value("--weights=");
             v8 && model::parse_quant_format(v8))
      o.quantize = model::parse_quant_format(v8);
    else if (a == "--activations=bf16") o.activations = model::dtype::bf16;
    else if (a == "--activations=f32") o.activations = model::dtype::f32;
    else if (a == "--kv-dtype=bf16") o.kv = kernels::dtype::bf16;
    else if (a == "--kv-dtype=f32") o.kv = kernels::dtype::f32;
    else if (const char* v7 = value("--quant-kernel=")) {
      for (model::layers::quant_isa isa : model::layers::quant_product_isas())
        if (std::string_view(model::layers::isa_name(isa)) == v7) o.quant_kernel = isa;
      if (!o.quant_kernel) {
        std::fprintf(stderr,
                     "kvactor-bench-model: --quant-kernel=%s is not a kernel this CPU runs:", v7);
        for (model::layers::quant_isa isa : model::layers::quant_product_isas())
          std::fprintf(stderr, " %s", model::layers::isa_name(isa));
        std::fprintf(stderr, "\n");
        return false;
      }
    } else {
      std::fprintf(
        stderr,
        "usage: kvactor-bench-model [--model=DIR] [--context=128] [--prefill=512] [--steps=10] "
        "[--reps=5] [--threads=0] "
        "[--weights=f32|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q2_k|q3_k|q4_k|q5_k|q6_k|iq4_nl|iq4_xs] "
        "[--activations=f32|bf16] [--kv-dtype=f32|bf16] [--quant-kernel=NAME]\n");
      return false;
    }
  }
  if (o.activations == model::dtype::bf16 || o.quantize) o.weights = model::dtype::bf16;
  return o.context > 0 && o.prefill > 0 && o.steps > 0 && o.reps > 0;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  if (o.quant_kernel) model::layers::force_quant_product_isa(o.quant_kernel);
  auto m = model::load_model_folder(o.model, o.weights);
  if (!m) {
    std::fprintf(stderr, "%s\n", m.error().message.c_str());
    return 1;
  }
  const std::vector<int> batches{1, 8, 32, 64};
  const int32_t bs = 16;
  const int max_batch = batches.back();
  const int blocks_per_seq = std::max(o.context + 1, o.prefill) / bs + 1;
  const int64_t num_blocks = int64_t{max_batch} * blocks_per_seq;
  const kernels::kv_cache_shape shape =
    model::transformer::cache_shape(m->config, num_blocks, bs, o.kv);
  kernels::device_options dopt;
  dopt.num_threads = o.threads;
  dopt.device_bytes = shape.total_bytes() + (int64_t{1} << 20);
  auto dev = kernels::make_device("cpu", dopt);
  if (!dev) {
    std::fprintf(stderr, "%s\n", dev.error().message.c_str());
    return 1;
  }
  auto cache = kernels::allocate_kv_cache(**dev, kernels::memory_kind::device, shape);
  if (!cache) {
    std::fprintf(stderr, "cannot allocate %lld bytes of KV cache\n",
                 static_cast<long long>(shape.total_bytes()));
    return 1;
  }
  const int64_t num_elements =
    shape.total_bytes() / static_cast<int64_t>(kernels::dtype_size(o.kv));
  for (int64_t i = 0; i < num_elements; ++i)
    kernels::store_from_float(o.kv, cache->view.base, size_t(i), 0.01f);
  auto tf = model::transformer::create(m->config, m->weights, **dev, cache->view,
                                       {std::max(o.prefill, max_batch), max_batch}, o.activations,
                                       o.quantize);
  if (!tf) {
    std::fprintf(stderr, "%s\n", tf.error().message.c_str());
    return 1;
  }

  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(max_batch));
  for (int s = 0; s < max_batch; ++s) // the sequences' blocks interleaved
    for (int b = 0; b < blocks_per_seq; ++b) tables[size_t(s)].push_back(b * max_batch + s);
  std::vector<int32_t> tokens(size_t(o.prefill));
  for (int i = 0; i < o.prefill; ++i)
    tokens[size_t(i)] = (i * 37 + 5) % int32_t(m->config.vocab_size);

  const std::optional<model::quant_format> quantized =
    o.quantize ? o.quantize : m->weights.quantized_format();
  std::printf(
    "model %s: hidden %lld, %lld layers, %lld/%lld heads of %lld, intermediate %lld, vocab %lld; "
    "%s matrices, %s KV; %d device threads (0: all cores); products: %s\n",
    o.model.c_str(), (long long)m->config.hidden_size, (long long)m->config.num_hidden_layers,
    (long long)m->config.num_attention_heads, (long long)m->config.num_key_value_heads,
    (long long)m->config.head_dim, (long long)m->config.intermediate_size,
    (long long)m->config.vocab_size,
    matrices_name(m->weights, o).c_str(), kernels::dtype_name(o.kv), o.threads,
    (quantized ? model::layers::products_name(*quantized)
                : model::layers::products_name(o.activations == model::dtype::bf16
                                                 ? model::packed_matrix::layout::pairs
                                                 : model::packed_matrix::layout::columns))
      .c_str());
  const int64_t weight_bytes = matrix_bytes(m->weights, o.quantize);
  std::printf("%.1f MB of matrices read per decode step; 'weights GB/s' = that x steps/s, 'of "
              "read' = its ratio "
              "to a plain read of as many bytes over as many threads\n",
              double(weight_bytes) / 1e6);
  std::printf("%-28s %12s %9s %9s %9s %11s %9s\n", "step", "tokens/s", "linear", "attention",
              "outside", "weights GB/s", "of read");
  kernels::thread_pool read_pool(
    o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency())));
  const std::vector<uint64_t> read_buffer = kernels::bench::read_buffer(weight_bytes);
  uint64_t read_sink = 0;
  const std::function<double()> read = [&] {
    return kernels::bench::timed_read(read_pool, read_buffer.data(), weight_bytes, read_sink);
  };

  {
    const model::sequence_chunk c{0, tokens, tables[0], true};
    const auto batch = model::forward_batch::build(std::span(&c, 1), bs);
    const figures f = measure(**tf, batch, 1, o.reps);
    std::printf("%-28s %12.0f %8.1f%% %8.1f%% %8.1f%%\n",
                ("prefill " + std::to_string(o.prefill)).c_str(), f.tokens_per_second,
                100 * f.linear_share, 100 * f.attention_share, 100 * f.outside_share);
  }
  for (int b : batches) {
    // NOTE: every timed step decodes at position `context` of each sequence
    // (rewriting the same slot), so the context stays fixed across steps.
    std::vector<model::sequence_chunk> chunks;
    for (int s = 0; s < b; ++s)
      chunks.push_back({o.context, std::span<const int32_t>(tokens).subspan(size_t(s % 16), 1),
                        tables[size_t(s)], true});
    const auto batch = model::forward_batch::build(chunks, bs);
    const figures f = measure(**tf, batch, o.steps, o.reps, read);
    const double weights_gbps = double(weight_bytes) * f.steps_per_second / 1e9;
    const double read_gbps = double(weight_bytes) / f.read_seconds / 1e9;
    std::printf("%-28s %12.0f %8.1f%% %8.1f%% %8.1f%% %11.1f %9.2f\n",
                ("decode batch " + std::to_string(b) + " ctx " + std::to_string(o.context)).c_str(),
                f.tokens_per_second, 100 * f.linear_share, 100 * f.attention_share,
                100 * f.outside_share, weights_gbps, weights_gbps / read_gbps);
  }
  return 0;
}
