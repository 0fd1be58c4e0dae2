#pragma once
// transformer: the Llama / Qwen3 forward pass over the paged KV cache, on
// any device.
//
// One call computes a step: embedding -> per layer [RMSNorm, q|k|v
// projections into one fused row, (Qwen3) per-head q/k RMSNorm, RoPE,
// cache_write of K/V, paged attention, o_proj + residual, RMSNorm, SwiGLU MLP
// + residual] -> final RMSNorm and LM head for the rows that sample.
//
// Everything is enqueued on the device's compute stream in order. Two
// implementations behind this interface, picked by the device kind:
//   cpu_transformer  (model/forward/cpu_transformer.hpp): host tasks of the
//                    CPU device, OpenBLAS
//   cuda_transformer (model/cuda/cuda_transformer.hpp, CUDA builds): kernels
//                    and cuBLAS on the compute stream, device-resident weights
// Both compute in fp32 (activations, accumulation) over an fp32 KV cache, so
// they agree within fp32 rounding. Both also take a bf16 KV cache: each
// step's K/V rows and queries are rounded to bf16 (nearest even), the cache
// write and attention run in bf16 and the attention output is widened back
// to fp32 for o_proj (cpu_transformer.hpp); and bf16 activations (an opt-in:
// each product rounds its input rows to bf16 and multiplies bf16 matrices,
// summing in fp32 — the CPU's bf16 instructions, cuBLAS's bf16 GEMM with
// fp32 compute, the matrices bf16 on the device; lossy).
// The CPU pass is batch-invariant on every CPU path: a sequence's K/V
// and logits are bit-identical whatever else is in the step, however its
// prompt is chunked, and whether a token is decoded or recomputed in a
// prefill — every product sums in one fixed order (layers::linear), every
// other op works row by row — see docs/model/forward-pass.md.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "base/result.hpp"
#include "model/config.hpp"
#include "model/device_sampling.hpp"
#include "model/forward/batch.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

// The largest step the scratch buffers hold: the caller's step limits (the
// runtime's defaults are in actors/api/kvactor/defaults.hpp); 0 is refused.
struct forward_limits {
  int32_t max_num_tokens = 0; // token rows per step
  int32_t max_num_seqs = 0;   // sequences (and sampled rows) per step
  // Logit edits per step the device sampler holds (samples_on_device);
  // 0: 2048 per sequence.
  int64_t max_sample_edits = 0;
  // Decode-step shapes the CUDA pass captures as CUDA graphs (0: none, every
  // step launched kernel by kernel; model/cuda/cuda_transformer.hpp).
  int32_t max_cuda_graphs = default_max_cuda_graphs;
  static constexpr int32_t default_max_cuda_graphs = 256;
};

// Where one step's time went (profiling on; CPU device only, zero elsewhere).
struct forward_profile {
  double blas_seconds = 0;      // matrix products (projections, MLP, LM head)
  double attention_seconds = 0; // cache write + paged attention
  double total_seconds = 0;     // first task start to last task end
  int64_t num_steps = 0;
};

class transformer {
public:
  // logits: [num_sample_rows, vocab_size], valid during the call only.
  using logits_callback = std::function<void(std::span<const float> logits)>;
  // One per sampled row, valid during the call only.
  using sampled_callback = std::function<void(std::span<const kernels::gpu::sampled_row> rows)>;

  virtual ~transformer() = default;
  transformer(const transformer&) = delete;
  transformer& operator=(const transformer&) = delete;

  // The forward pass for `dev`'s kind, its products taking `activations`
  // (f32 or bf16), the dense matrices quantised to `quantize` if set.
  // `weights` and the memory behind `cache` must outlive the transformer.
  // Fails for a cache shape that disagrees with the config, a cache dtype
  // other than f32 or bf16, non-positive limits, or what the device's
  // implementation cannot do (CUDA: head_dim other than 64 or 128, out of
  // device memory, a CUDA or cuBLAS error, quantised weights; CPU:
  // quantised weights with bf16 activations or a width not a multiple of 32).
  static result<std::unique_ptr<transformer>>
  create(const model_config& config, const model_weights& weights, kernels::device& dev,
         const kernels::kv_cache_view& cache, forward_limits limits,
         dtype activations = dtype::f32, std::optional<quant_format> quantize = std::nullopt);

  // The cache shape this model needs for `num_blocks` blocks of `kv_type`
  // elements (f32, or bf16: half the bytes per block).
  static kernels::kv_cache_shape cache_shape(const model_config& config, int64_t num_blocks,
                                             int32_t block_size,
                                             kernels::dtype kv_type = kernels::dtype::f32);

  // Whether the pass of a device of `kind` takes a KV cache of `type`: f32
  // or bf16 on both devices; the error names the dtype.
  static status check_cache_dtype(kernels::device_kind kind, kernels::dtype type);

  // Pinned host memory a forward pass on a device with memory of its own
  // (CUDA) takes from the device's pinned pool: the step upload and the
  // sampled logits. Add it to kernels::device_options::pinned_bytes.
  static int64_t pinned_host_bytes(const model_config& config, forward_limits limits,
                                        int32_t block_size);

  // Enqueues one step on the compute stream and returns at once; `done`
  // runs on a device thread when the logits are ready. Steps run one at a
  // time: the next is enqueued only once `done` has run (the CUDA pass
  // writes its staging buffers at once, on the caller's thread). A step
  // beyond the limits is a broken invariant of the caller. An error (CUDA: a
  // failed launch or copy) means `done` never runs; the device is unusable
  // then.
  virtual status enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done) = 0;

  // Whether the pass samples where its logits are (CUDA: kernels/cuda/
  // sample_ops.cuh), taking steps whose rows need at most
  // max_sample_edits(limits()) logit edits in all through enqueue_sampled.
  virtual bool samples_on_device() const { return false; }
  static int64_t max_sample_edits(const forward_limits& limits);
  // enqueue, then sampling's rows on the device: `done` gets a token (and
  // the log probabilities asked for) per row of `sampling`, one per sampled
  // row of the batch. Fails on a pass that does not sample on the device.
  virtual status enqueue_sampled(std::shared_ptr<const forward_batch> batch,
                                 const device_sampling_batch& sampling, sampled_callback done);

  // Enqueues and waits: [num_sample_rows, vocab_size] (tests, tools).
  result<std::vector<float>> run(const forward_batch& batch);

  const model_config& config() const { return config_; }
  const forward_limits& limits() const { return limits_; }
  kernels::device& device() const { return dev_; }
  const kernels::kv_cache_view& cache() const { return cache_; }
  // Moves the pass to another pool of the same block shape (any number of
  // blocks): model_runner sizes the pool on a GPU once the pass's own
  // memory is taken. Only between steps.
  void use_cache(const kernels::kv_cache_view& cache);

  // Profiling adds clock reads around the products and the attention (CPU).
  void set_profiling(bool on) { profiling_ = on; }
  // Accumulated since the last reset; read only when no step is in flight.
  const forward_profile& profile() const { return profile_; }
  void reset_profile() { profile_ = {}; }

protected:
  transformer(const model_config& config, kernels::device& dev, const kernels::kv_cache_view& cache,
              forward_limits limits)
      : config_(config), dev_(dev), cache_(cache), limits_(limits) {}

  // The invariants every implementation asserts before it enqueues a step.
  void check_batch(const forward_batch& b) const;

  model_config config_;
  kernels::device& dev_;
  kernels::kv_cache_view cache_;
  forward_limits limits_;
  std::atomic<bool> profiling_{false}; // set by the caller, read by the stream
  forward_profile profile_;            // stream thread while steps run
};

} // namespace kvactor::model
