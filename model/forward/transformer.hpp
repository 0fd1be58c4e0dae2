#pragma once
// transformer: the Llama / Qwen3 forward pass over the paged KV cache.
//
// One call computes a step: embedding -> per layer [RMSNorm, q|k|v
// projections into one fused row, (Qwen3) per-head q/k RMSNorm, RoPE,
// cache_write of K/V, paged attention, o_proj + residual, RMSNorm, SwiGLU MLP
// + residual] -> final RMSNorm and LM head for the rows that sample.
//
// Everything is enqueued on the device's compute stream in order: the
// element-wise ops and matrix products as host tasks of the CPU device, the
// cache write and attention through kernels::cache_write / paged_attention.
// Scratch activations are allocated once for `forward_limits` and reused by
// every step (stream order keeps steps apart).
//
// Numerics: fp32 activations, fp32 KV cache, fp32 accumulation. Matrices
// are fp32, or bf16 kept as in the checkpoint and widened exactly: the same
// results either way. Batch-invariant on CPUs with AVX-512: a sequence's K/V
// and logits are bit-identical whatever else is in the step, however its
// prompt is chunked, and whether a token is decoded or recomputed in a
// prefill — every product sums in one fixed order (layers::linear), and every
// other op works row by row (attention per query token, over the keys in
// block order) — see model/README.md.
// NOTE: Debian's OpenBLAS 0.3.21 declares cblas_sbgemm in cblas.h but its
// libopenblas.so does not export it (checked with nm), and sbgemm would take
// bf16 activations anyway (lossy).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "model/config.hpp"
#include "kernels/result.hpp"
#include "model/forward/batch.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

/// The largest step the scratch buffers hold.
struct forward_limits {
  std::int32_t max_num_tokens = 512; // token rows per step
  std::int32_t max_num_seqs = 64;    // sequences (and sampled rows) per step
};

/// Where one step's time went (profiling on; CPU device).
struct forward_profile {
  double blas_seconds = 0;      // matrix products (projections, MLP, LM head)
  double attention_seconds = 0; // cache write + paged attention
  double total_seconds = 0;     // first task start to last task end
  std::int64_t num_steps = 0;
};

class transformer {
public:
  /// logits: [num_sample_rows, vocab_size], valid during the call only.
  using logits_callback = std::function<void(std::span<const float> logits)>;

  /// `weights` and the memory behind `cache` must outlive the transformer.
  /// Fails for a device without a forward pass yet (CUDA), a non-fp32 cache, or a cache shape that disagrees with the config.
  static result<std::unique_ptr<transformer>> create(const model_config& config, const model_weights& weights,
                                                     kernels::device& dev, const kernels::kv_cache_view& cache,
                                                     forward_limits limits);

  /// The cache shape this model needs for `num_blocks` blocks.
  static kernels::kv_cache_shape cache_shape(const model_config& config, std::int64_t num_blocks,
                                             std::int32_t block_size);

  /// Enqueues one step on the compute stream and returns at once; `done`
  /// runs on the stream's thread when the logits are ready.
  void enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done);

  /// Enqueues and waits: [num_sample_rows, vocab_size] (tests, tools).
  std::vector<float> run(const forward_batch& batch);

  const model_config& config() const { return config_; }
  const forward_limits& limits() const { return limits_; }
  kernels::device& device() const { return dev_; }
  const kernels::kv_cache_view& cache() const { return cache_; }

  /// Profiling adds clock reads around the products and the attention.
  void set_profiling(bool on) { profiling_ = on; }
  /// Accumulated since the last reset; read only when no step is in flight.
  const forward_profile& profile() const { return profile_; }
  void reset_profile() { profile_ = {}; }

private:
  transformer(const model_config& config, const model_weights& weights, kernels::device& dev,
              const kernels::kv_cache_view& cache, forward_limits limits);
  void host_task(std::function<void()> task);
  void embed(const forward_batch& b);
  void attention_input(const forward_batch& b, std::int32_t layer);
  void attention_output_and_mlp(const forward_batch& b, std::int32_t layer);
  void lm_head(const forward_batch& b);
  void timed_linear(const float* x, std::int64_t ldx, std::int64_t m, const weight_view& w, float* y,
                    std::int64_t ldy, bool accumulate);

  model_config config_;
  const model_weights& weights_;
  kernels::device& dev_;
  kernels::kv_cache_view cache_;
  forward_limits limits_;
  std::vector<double> inv_freq_; // [head_dim / 2]
  std::int64_t qkv_stride_;      // q_size + 2 * kv_size

  // Scratch, reused by every step (stream order).
  std::vector<float> hidden_;   // [max_num_tokens, hidden]: the residual stream
  std::vector<float> normed_;   // [max_num_tokens, hidden]
  std::vector<float> qkv_;      // [max_num_tokens, q_size + 2 kv_size]: q | k | v
  std::vector<float> attn_;     // [max_num_tokens, num_heads, head_dim]
  std::vector<float> gate_;     // [max_num_tokens, intermediate]
  std::vector<float> up_;       // [max_num_tokens, intermediate]
  std::vector<float> cos_, sin_; // [max_num_tokens, head_dim / 2]
  std::vector<float> last_;     // [max_num_seqs, hidden]: rows that sample
  std::vector<float> logits_;   // [max_num_seqs, vocab]

  std::atomic<bool> profiling_{false}; // set by the caller, read by the stream
  forward_profile profile_;     // stream thread while steps run
  double attention_started_ = 0;
  double step_started_ = 0;
};

} // namespace kvactor::model
