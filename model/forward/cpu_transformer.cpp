#include "model/forward/cpu_transformer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kernels/cpu_device.hpp"
#include "kernels/ops.hpp"
#include "model/forward/layers.hpp"
#include "model/rope.hpp"

namespace kvactor::model {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

kernels::thread_pool& pool_of(kernels::device& dev) {
  return static_cast<kernels::cpu_device&>(dev).pool();
}

// The matrices' packing for products taking `activations`: as the weights
// are (columns), bf16 pairs, or block-quantised (quantised weights, or
// dense ones quantised to `quantize`).
struct packing {
  dtype type;
  packed_matrix::layout layout;
  std::optional<quant_format> quantize;
  packing(dtype weights, dtype activations, std::optional<quant_format> q)
    : type(activations == dtype::bf16 ? dtype::bf16 : weights),
      layout(activations == dtype::bf16 ? packed_matrix::layout::pairs
                                        : packed_matrix::layout::columns),
      quantize(q) {}
};

std::variant<packed_matrix, std::vector<quantized_matrix>>
pack(std::initializer_list<weight_view> parts, const packing& p) {
  const std::span<const weight_view> views(parts.begin(), parts.size());
  if (!views.front().quant && !p.quantize) return packed_matrix::pack(views, p.type, p.layout);
  // NOTE: the loaders give a stack either all stored quantised or none.
  std::vector<quantized_matrix> runs;
  for (std::size_t begin = 0, end = 0; begin < views.size(); begin = end) {
    const std::optional<quant_format> format = views[begin].quant;
    for (end = begin + 1; end < views.size() && views[end].quant == format;) ++end;
    runs.push_back(quantized_matrix::pack(views.subspan(begin, end - begin),
                                          format ? *format : *p.quantize));
  }
  return runs;
}

} // namespace

cpu_transformer::cpu_transformer(const model_config& config, const model_weights& weights,
                                 kernels::device& dev, const kernels::kv_cache_view& cache,
                                 forward_limits limits, dtype activations,
                                 std::optional<quant_format> quantize)
  : transformer(config, dev, cache, limits),
    weights_(weights),
    lm_head_(pack({weights.lm_head()}, packing(weights.matrix_dtype(), activations, quantize))),
    inv_freq_(rope_inv_freq(config)),
    qkv_stride_(config.q_size() + 2 * config.kv_size()) {
  const packing type(weights.matrix_dtype(), activations, quantize);
  for (const layer_weights& w : weights.layers()) {
    std::vector<float> qkv_bias;
    if (w.q_bias)
      for (const weight_view* b : {&*w.q_bias, &*w.k_bias, &*w.v_bias})
        qkv_bias.insert(qkv_bias.end(), b->f32(), b->f32() + b->num_elements());
    layers_.push_back({pack({w.q_proj, w.k_proj, w.v_proj}, type), pack({w.o_proj}, type),
                       pack({w.gate_proj, w.up_proj}, type), pack({w.down_proj}, type),
                       std::move(qkv_bias)});
  }
  // NOTE: the products read the packed copies; the embedding and norms
  // fault back in from the files as they are read.
  weights.drop_mapped_pages();
  const auto t = static_cast<std::size_t>(limits.max_num_tokens);
  const auto s = static_cast<std::size_t>(limits.max_num_seqs);
  const auto h = static_cast<std::size_t>(config.hidden_size);
  hidden_.resize(t * h);
  normed_.resize(t * h);
  qkv_.resize(t * static_cast<std::size_t>(qkv_stride_));
  attn_.resize(t * static_cast<std::size_t>(config.q_size()));
  if (cache.shape.type == kernels::dtype::bf16) {
    qkv16_.resize(qkv_.size());
    attn16_.resize(attn_.size());
  }
  gate_up_.resize(t * 2 * static_cast<std::size_t>(config.intermediate_size));
  cos_.resize(t * inv_freq_.size());
  sin_.resize(cos_.size());
  last_.resize(s * h);
  logits_.resize(s * static_cast<std::size_t>(config.vocab_size));
}

void cpu_transformer::host_task(std::function<void()> task) {
  static_cast<kernels::cpu_device&>(dev_).enqueue(kernels::streams::compute, std::move(task));
}

void cpu_transformer::timed_linear(const float* x, int64_t ldx, int64_t m, const cpu_matrix& w,
                                   float* y, int64_t ldy, bool accumulate) {
  const double t0 = profiling_ ? now_seconds() : 0.0;
  if (const auto* dense = std::get_if<packed_matrix>(&w)) {
    layers::linear(pool_of(dev_), x, ldx, m, *dense, y, ldy, accumulate);
  } else {
    for (const quantized_matrix& part : std::get<std::vector<quantized_matrix>>(w)) {
      layers::linear(pool_of(dev_), x, ldx, m, part, y, ldy, accumulate);
      y += part.rows();
    }
  }
  if (profiling_) profile_.blas_seconds += now_seconds() - t0;
}

status cpu_transformer::enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done) {
  const forward_batch& b = *batch;
  check_batch(b);
  // NOTE: the batch's arrays are the kernels' metadata; every task holds the
  // batch until the last one has run.
  host_task([this, batch] {
    if (profiling_) step_started_ = now_seconds();
    embed(*batch);
  });
  for (int32_t layer = 0; layer < static_cast<int32_t>(config_.num_hidden_layers); ++layer) {
    host_task([this, batch, layer] {
      attention_input(*batch, layer);
      if (profiling_) attention_started_ = now_seconds();
    });
    enqueue_attention(b, layer);
    host_task([this, batch, layer] {
      if (profiling_) profile_.attention_seconds += now_seconds() - attention_started_;
      attention_output_and_mlp(*batch, layer);
    });
  }
  host_task([this, batch, done = std::move(done)] {
    lm_head(*batch);
    if (profiling_) {
      profile_.total_seconds += now_seconds() - step_started_;
      ++profile_.num_steps;
    }
    done(std::span<const float>(
      logits_.data(), static_cast<std::size_t>(batch->num_sample_rows() * config_.vocab_size)));
  });
  return {};
}

// cache_write of the step's K/V rows, then paged attention into attn_ (or,
// with a bf16 cache, from qkv16_ into attn16_), on the compute stream.
void cpu_transformer::enqueue_attention(const forward_batch& b, int32_t layer) {
  const kernels::dtype type = cache_.shape.type;
  const bool bf16 = type == kernels::dtype::bf16;
  const auto kv_heads = static_cast<int32_t>(config_.num_key_value_heads);
  const auto head_dim = static_cast<int32_t>(config_.head_dim);
  const std::size_t elem = kernels::dtype_size(type);
  // [T, q_size + 2 kv_size] of `type`: q | k | v, rows qkv_stride_ apart
  const char* qkv = bf16 ? reinterpret_cast<const char*>(qkv16_.data())
                         : reinterpret_cast<const char*>(qkv_.data());
  kernels::cache_write_params w{};
  // [T, kv_heads, D]
  w.key = qkv + static_cast<std::size_t>(config_.q_size()) * elem;
  // [T, kv_heads, D]
  w.value = qkv + static_cast<std::size_t>(config_.q_size() + config_.kv_size()) * elem;
  w.k_cache = cache_.k(layer);
  w.v_cache = cache_.v(layer);
  w.slot_mapping = b.slot_mapping.data();
  w.num_tokens = b.num_tokens();
  w.num_kv_heads = kv_heads;
  w.head_dim = head_dim;
  w.type = type;
  w.key_stride = qkv_stride_;
  w.value_stride = qkv_stride_;
  kernels::cache_write(dev_, kernels::streams::compute, w);

  kernels::paged_attention_params a{};
  // [T, heads, D]
  a.out = bf16 ? static_cast<void*>(attn16_.data()) : static_cast<void*>(attn_.data());
  // [T, heads, D]
  a.query = qkv;
  a.k_cache = cache_.k(layer);
  a.v_cache = cache_.v(layer);
  a.block_tables = b.block_tables.data();
  a.seq_lens = b.seq_lens.data();
  a.query_start_loc = b.is_decode() ? nullptr : b.query_start_loc.data();
  a.num_seqs = b.num_seqs();
  a.num_tokens = b.num_tokens();
  a.num_heads = static_cast<int32_t>(config_.num_attention_heads);
  a.num_kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.block_size = b.block_size;
  a.max_blocks_per_seq = b.max_blocks_per_seq;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.type = type;
  a.query_stride = qkv_stride_;
  kernels::paged_attention(dev_, kernels::streams::compute, a);
}

void cpu_transformer::embed(const forward_batch& b) {
  layers::embedding(pool_of(dev_), weights_.embed_tokens(), b.token_ids, hidden_.data());
  layers::rope_angles(b.positions, inv_freq_, cos_.data(), sin_.data());
}

void cpu_transformer::attention_input(const forward_batch& b, int32_t layer) {
  const layer_weights& w = weights_.layers()[static_cast<std::size_t>(layer)];
  kernels::thread_pool& pool = pool_of(dev_);
  const int64_t t = b.num_tokens();
  const int64_t h = config_.hidden_size;
  const auto eps = static_cast<float>(config_.rms_norm_eps);
  layers::rms_norm(pool, hidden_.data(), h, normed_.data(), h, t, h, w.input_layernorm.f32(), eps);
  float* q = qkv_.data();                        // [T, heads, D], rows qkv_stride_ apart
  float* k = q + config_.q_size();               // [T, kv_heads, D]; v follows
  const packed_layer& p = layers_[static_cast<std::size_t>(layer)];
  timed_linear(normed_.data(), h, t, p.qkv, q, qkv_stride_, false);
  if (!p.qkv_bias.empty())
    layers::add_bias(pool, q, qkv_stride_, t, qkv_stride_, p.qkv_bias.data());
  if (config_.has_qk_norm()) {
    layers::rms_norm_heads(pool, q, qkv_stride_, t, config_.num_attention_heads, config_.head_dim,
                           w.q_norm->f32(), eps);
    layers::rms_norm_heads(pool, k, qkv_stride_, t, config_.num_key_value_heads, config_.head_dim,
                           w.k_norm->f32(), eps);
  }
  layers::rope(pool, q, qkv_stride_, t, config_.num_attention_heads, config_.head_dim, cos_.data(),
               sin_.data());
  layers::rope(pool, k, qkv_stride_, t, config_.num_key_value_heads, config_.head_dim, cos_.data(),
               sin_.data());
  // bf16 cache: whole q | k | v rows rounded (the attention reads q, the cache write k and v).
  if (!qkv16_.empty())
    layers::to_bf16(pool, q, qkv_stride_, qkv16_.data(), qkv_stride_, t, qkv_stride_);
}

void cpu_transformer::attention_output_and_mlp(const forward_batch& b, int32_t layer) {
  const layer_weights& w = weights_.layers()[static_cast<std::size_t>(layer)];
  kernels::thread_pool& pool = pool_of(dev_);
  const int64_t t = b.num_tokens();
  const int64_t h = config_.hidden_size;
  const int64_t inter = config_.intermediate_size;
  const auto eps = static_cast<float>(config_.rms_norm_eps);
  // NOTE: beta = 1 in the product adds the residual for free.
  const packed_layer& p = layers_[static_cast<std::size_t>(layer)];
  if (!attn16_.empty())
    layers::from_bf16(pool, attn16_.data(), config_.q_size(), attn_.data(), config_.q_size(), t,
                      config_.q_size());
  timed_linear(attn_.data(), config_.q_size(), t, p.o, hidden_.data(), h, true);
  layers::rms_norm(pool, hidden_.data(), h, normed_.data(), h, t, h,
                   w.post_attention_layernorm.f32(), eps);
  float* gate = gate_up_.data();
  timed_linear(normed_.data(), h, t, p.gate_up, gate, 2 * inter, false);
  layers::swiglu(pool, gate, gate + inter, 2 * inter, gate, 2 * inter, t, inter);
  timed_linear(gate, 2 * inter, t, p.down, hidden_.data(), h, true);
}

void cpu_transformer::lm_head(const forward_batch& b) {
  const int64_t h = config_.hidden_size;
  const int64_t n = b.num_sample_rows();
  if (n == 0) return;
  for (int64_t i = 0; i < n; ++i)
    std::copy_n(hidden_.data() + b.sample_rows[static_cast<std::size_t>(i)] * h, h,
                last_.data() + i * h);
  layers::rms_norm(pool_of(dev_), last_.data(), h, last_.data(), h, n, h, weights_.norm().f32(),
                   static_cast<float>(config_.rms_norm_eps));
  timed_linear(last_.data(), h, n, lm_head_, logits_.data(), config_.vocab_size, false);
}

} // namespace kvactor::model
