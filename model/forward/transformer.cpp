#include "model/forward/transformer.hpp"

#include <future>
#include <string>

#include "model/forward/batch_upload.hpp"
#include "model/forward/cpu_transformer.hpp"
#include "model/forward/layers.hpp"
#if KVACTOR_HAVE_CUDA
#include "model/cuda/cuda_transformer.hpp"
#endif

namespace kvactor::model {

kernels::kv_cache_shape transformer::cache_shape(const model_config& c, int64_t num_blocks,
                                                 int32_t block_size, kernels::dtype kv_type) {
  kernels::kv_cache_shape s;
  s.num_layers = static_cast<int32_t>(c.num_hidden_layers);
  s.num_blocks = num_blocks;
  s.block_size = block_size;
  s.num_kv_heads = static_cast<int32_t>(c.num_key_value_heads);
  s.head_dim = static_cast<int32_t>(c.head_dim);
  s.type = kv_type;
  return s;
}

status transformer::check_cache_dtype(kernels::device_kind kind, kernels::dtype type) {
  const std::string name = kernels::dtype_name(type);
  if (type != kernels::dtype::f32 && type != kernels::dtype::bf16)
    return error_in("forward pass", std::string("the ") +
                                        (kind == kernels::device_kind::cuda ? "CUDA" : "CPU") +
                                        " forward pass takes an f32 or bf16 KV cache, not " + name);
  return {};
}

int64_t transformer::pinned_host_bytes(const model_config& config, forward_limits limits,
                                            int32_t block_size) {
  const auto upload = batch_upload_layout::capacity(limits.max_num_tokens, limits.max_num_seqs,
                                                    max_blocks_per_seq(config, block_size),
                                                    static_cast<int32_t>(config.head_dim / 2));
  const int64_t sampling =
    int64_t{limits.max_num_seqs} *
      static_cast<int64_t>(sizeof(kernels::gpu::sample_row) + sizeof(kernels::gpu::sampled_row)) +
    max_sample_edits(limits) * static_cast<int64_t>(sizeof(kernels::gpu::logit_edit));
  return static_cast<int64_t>(upload.total_bytes) +
         int64_t{limits.max_num_seqs} * config.vocab_size * 4 + sampling;
}

int64_t transformer::max_sample_edits(const forward_limits& limits) {
  // NOTE: a row's edits are its bias, its bans and its history's distinct
  // tokens; a step whose rows need more samples on the host.
  constexpr int64_t per_row = 2048;
  return limits.max_sample_edits > 0 ? limits.max_sample_edits
                                     : int64_t{limits.max_num_seqs} * per_row;
}

status transformer::enqueue_sampled(std::shared_ptr<const forward_batch>,
                                    const device_sampling_batch&, sampled_callback) {
  return error_in("forward pass", "this pass samples on the host, from its logits");
}

namespace {

// Quantised matrices (stored so, or asked for) run on the CPU with fp32
// activations, over rows of whole blocks (a file's rows are checked as
// it is read).
status check_quantized(const model_config& config, const model_weights& weights,
                       kernels::device_kind kind, dtype activations,
                       std::optional<quant_format> quantize) {
  const std::optional<quant_format> stored = weights.quantized_format();
  const std::optional<quant_format> format = stored ? stored : quantize;
  if (!format) return {};
  const std::string name(quant_name(*format));
  if (kind != kernels::device_kind::cpu)
    return error_in("forward pass", name + " weights run on the CPU device only");
  if (activations != dtype::f32)
    return error_in("forward pass", name + " weights multiply fp32 activations, not " +
                                        kernels::dtype_name(activations));
  for (const auto& [what, width] : {std::pair{"hidden_size", config.hidden_size},
                                    std::pair{"the attention width", config.q_size()},
                                    std::pair{"intermediate_size", config.intermediate_size}})
    if (width % quant_block_values(*format) != 0)
      return error_in("forward pass", name + " weights need rows of whole blocks of " +
                                          std::to_string(quant_block_values(*format)) +
                                          " values; " + what + " is " + std::to_string(width));
  return {};
}

} // namespace

result<std::unique_ptr<transformer>>
transformer::create(const model_config& config, const model_weights& weights, kernels::device& dev,
                    const kernels::kv_cache_view& cache, forward_limits limits, dtype activations,
                    std::optional<quant_format> quantize) {
  const kernels::kv_cache_shape& got = cache.shape;
  const kernels::kv_cache_shape want =
    cache_shape(config, got.num_blocks, got.block_size, got.type);
  if (got.num_layers != want.num_layers || got.num_kv_heads != want.num_kv_heads ||
      got.head_dim != want.head_dim || got.block_size <= 0 || cache.base == nullptr)
    return error_in("forward pass", "the KV cache shape disagrees with the model (want " +
                                        std::to_string(want.num_layers) + " layers, " +
                                        std::to_string(want.num_kv_heads) + " KV heads of " +
                                        std::to_string(want.head_dim) + ", a positive block size)");
  if (const status s = check_cache_dtype(dev.kind(), got.type); !s) return s.error();
  if (limits.max_num_tokens <= 0 || limits.max_num_seqs <= 0)
    return error_in("forward pass", "forward limits must be positive");
  if (activations != dtype::f32 && activations != dtype::bf16)
    return error_in("forward pass", std::string("activations in ") +
                                        kernels::dtype_name(activations) +
                                        " are not built (f32 or bf16)");
  if (const status s = check_quantized(config, weights, dev.kind(), activations, quantize); !s)
    return s.error();
  switch (dev.kind()) {
  case kernels::device_kind::cpu:
    return std::unique_ptr<transformer>(
      new cpu_transformer(config, weights, dev, cache, limits, activations, quantize));
  case kernels::device_kind::cuda:
#if KVACTOR_HAVE_CUDA
  {
    auto t = cuda_transformer::create(config, weights, dev, cache, limits, activations);
    if (!t) return t.error();
    return std::unique_ptr<transformer>(std::move(*t));
  }
#else
    break;
#endif
  }
  return error_in("forward pass",
                    "no forward pass for the device " + dev.name() + " in this build");
}

void transformer::use_cache(const kernels::kv_cache_view& cache) {
  kernels::kv_cache_shape want = cache_.shape;
  want.num_blocks = cache.shape.num_blocks;
  KVACTOR_ASSERT(cache.base != nullptr && cache.shape.num_blocks > 0 &&
                   cache.shape.total_bytes() == want.total_bytes() &&
                   cache.shape.block_bytes() == want.block_bytes() &&
                   cache.shape.type == want.type,
                 "a KV pool of another block shape");
  cache_ = cache;
}

void transformer::check_batch(const forward_batch& b) const {
  KVACTOR_ASSERT(b.num_tokens() > 0 && b.num_tokens() <= limits_.max_num_tokens,
                 "step larger than the forward limits");
  KVACTOR_ASSERT(b.num_seqs() <= limits_.max_num_seqs, "more sequences than the forward limits");
  KVACTOR_ASSERT(b.block_size == cache_.shape.block_size, "batch built for another block size");
  const int64_t num_slots = cache_.shape.num_blocks * cache_.shape.block_size;
  for (const int64_t slot : b.slot_mapping)
    KVACTOR_ASSERT(slot >= 0 && slot < num_slots, "slot outside the KV cache");
  for (const int32_t block : b.block_tables)
    KVACTOR_ASSERT(block >= 0 && block < cache_.shape.num_blocks, "block outside the KV cache");
}

result<std::vector<float>> transformer::run(const forward_batch& batch) {
  std::promise<std::vector<float>> p;
  auto f = p.get_future();
  const status s =
    enqueue(std::make_shared<const forward_batch>(batch), [&p](std::span<const float> logits) {
      p.set_value(std::vector<float>(logits.begin(), logits.end()));
    });
  if (!s) return s.error();
  return f.get();
}

} // namespace kvactor::model
