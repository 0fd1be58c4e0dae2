#pragma once
// cuda_transformer: the forward pass on a CUDA device (CUDA builds only).
//
//  create   weights -> device, q|k|v fused per layer (device_weights): matrices
//           fp32, or bf16 with bf16 activations; norm weights fp32
//           activations, the step upload and the logits sized from forward_limits
//           a cuBLAS handle bound to the compute stream, with its own workspace
//  enqueue  everything on the compute stream, in order; returns at once
//    [caller]   pack the batch's arrays and RoPE angles into one buffer (batch_upload)
//    [host fn]  copy it into pinned staging
//    [copy]     staging -> device: the step's one host -> device copy
//    [kernels]  the step's launches (forward/device_forward.hpp) through cuda_ops:
//               model kernels, paged KV-cache kernels, cuBLAS products
//    [copy]     sampled logits -> pinned host
//    [host fn]  done(logits)
//  decode steps     the same, their [kernels] a CUDA graph once the shape
//                   repeats (below)
//  enqueue_sampled  the same up to the logits, then
//    [copy]     the rows' sampling (device_sampling_batch) -> device, by pinned staging
//    [kernels]  the sampler (kernels/cuda/sample_ops.cuh): logprobs, edits, tokens
//    [copy]     a sampled_row per row -> pinned host
//    [host fn]  done(rows)
//
// Numerics as on the CPU: fp32 activations, fp32 products and sums
// (cublas_gemm), RoPE angles from the host in double; with bf16 activations
// each product's input rows rounded to bf16 and multiplied by bf16 matrices
// (fp32 sums); with a bf16 KV cache q|k|v rounded to bf16 after RoPE, the
// cache and attention in bf16. Every CUDA and cuBLAS call returns its error
// as a value (cuda_check.hpp).
// CUDA graphs: a decode step's launches depend on its numbers of sequences
// and sampled rows and the width of its block tables only, everything else
// being at fixed addresses (the weights, the scratch, the upload, the
// cache), when the tables are uploaded graph_table_width wide
// (batch_upload.hpp). The second
// decode step of a (sequences, rows, width) records its launches as a graph
// (cuda_device::capture), and every step of that shape from then on is the
// graph's one launch: about 17 launches per layer become one per step. The
// first of a shape runs kernel by kernel and warms cuBLAS for it. At most
// limits.max_cuda_graphs shapes; a capture CUDA refuses turns graphs off
// (said once on stderr), never a step. A graph's results are the kernels'
// own: the same launches with the same arguments.
//
// Runs on H100 and H200 GPUs (tools/gpu-check); docs/model/cuda.md has the
// figures.

#include <cuda_runtime_api.h>

#include <atomic>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "kernels/cuda_device.hpp"
#include "model/cuda/cublas_gemm.hpp"
#include "model/cuda/cuda_ops.hpp"
#include "model/cuda/device_weights.hpp"
#include "model/forward/batch_upload.hpp"
#include "model/forward/transformer.hpp"

namespace kvactor::model {

class cuda_transformer final : public transformer {
public:
  // `dev` must be a CUDA device; transformer::create has checked the cache
  // (f32 or bf16), the limits and `activations` (f32 or bf16: bf16 keeps the
  // matrices in bf16 on the device). Fails for a head_dim the CUDA
  // attention lacks (64 and 128 only), out of device or pinned memory, or
  // a CUDA / cuBLAS error.
  static result<std::unique_ptr<cuda_transformer>>
  create(const model_config& config, const model_weights& weights, kernels::device& dev,
         const kernels::kv_cache_view& cache, forward_limits limits, dtype activations);

  // Device bytes of the weights (device_weights::num_bytes).
  std::size_t weight_bytes() const { return weights_.num_bytes(); }
  ~cuda_transformer() override; // waits for the steps in flight

  status enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done) override;
  bool samples_on_device() const override { return true; }
  status enqueue_sampled(std::shared_ptr<const forward_batch> batch,
                         const device_sampling_batch& sampling, sampled_callback done) override;

  // Steps launched as a CUDA graph so far, and the graphs held.
  int64_t graph_steps() const { return graph_steps_; }
  int32_t num_graphs() const { return num_graphs_; }
  // Kernels and cuBLAS products the last step launched one by one (0 when
  // it was a graph; cuda_ops::num_launches).
  int64_t last_step_launches() const { return last_step_launches_; }

private:
  struct graph_key {
    int32_t num_seqs;
    int32_t num_sample_rows; // a sequence's prefill chunk of one token samples no row
    int32_t table_width;
    auto operator<=>(const graph_key&) const = default;
  };
  struct graph_entry {
    int32_t seen = 0;
    cudaGraphExec_t exec = nullptr;
  };

  cuda_transformer(const model_config& config, kernels::cuda_device& dev,
                   const kernels::kv_cache_view& cache, forward_limits limits,
                   device_weights weights);
  status allocate();
  // Checks the batch and enqueues the pass up to the logits in logits_.
  status enqueue_pass(const forward_batch& b);
  // The graph of decode step `b` uploaded at `layout`: made at the shape's
  // second sight; nullptr: launch it kernel by kernel.
  cudaGraphExec_t graph_for(const forward_batch& b, const batch_upload_layout& layout);
  void drop_graphs();
  status enqueue_sampler(const device_sampling_batch& sampling, int32_t num_rows);
  status stage_upload(const forward_batch& b, const batch_upload_layout& layout,
                      cudaStream_t stream);
  forward_buffers buffers() const;

  kernels::cuda_device& cuda_;
  int32_t max_blocks_per_seq_; // widest block table the upload holds
  std::vector<double> inv_freq_;    // [head_dim / 2]
  int64_t qkv_stride_;         // q_size + 2 * kv_size
  device_weights weights_;

  // Device scratch, reused by every step (stream order keeps steps apart).
  kernels::buffer hidden_; // [max_num_tokens, hidden]: the residual stream
  kernels::buffer normed_; // [max_num_tokens, hidden]
  kernels::buffer qkv_;    // [max_num_tokens, q_size + 2 kv_size]: q | k | v
  kernels::buffer attn_;   // [max_num_tokens, num_heads, head_dim]
  kernels::buffer gate_;   // [max_num_tokens, intermediate]
  kernels::buffer up_;     // [max_num_tokens, intermediate]
  kernels::buffer last_;   // [max_num_seqs, hidden]: rows that sample
  kernels::buffer logits_; // [max_num_seqs, vocab]
  kernels::buffer upload_; // [batch_upload capacity] bytes
  kernels::buffer sampling_; // [max_num_seqs] sample_row, then [max_sample_edits] logit_edit
  kernels::buffer sampled_;  // [max_num_seqs] sampled_row
  // bf16 matrices: [max(max_num_tokens, max_num_seqs), bf16_input_width] bf16
  kernels::buffer x_bf16_;
  kernels::buffer qkv_bf16_;  // bf16 cache: [max_num_tokens, q_size + 2 kv_size] bf16
  kernels::buffer attn_bf16_; // bf16 cache: [max_num_tokens, num_heads, head_dim] bf16
  // Pinned host memory.
  kernels::buffer upload_staging_; // [batch_upload capacity] bytes
  kernels::buffer logits_host_;    // [max_num_seqs, vocab]
  kernels::buffer sampling_staging_; // as sampling_
  kernels::buffer sampled_host_;     // as sampled_
  std::atomic<bool> in_flight_{false}; // a step enqueued whose `done` has not run
  std::map<graph_key, graph_entry> graphs_;
  int32_t num_graphs_ = 0;
  kernels::kv_cache_view graphs_cache_; // the pool the graphs write (use_cache moves it)
  bool graphs_off_ = false;            // a capture failed
  int64_t graph_steps_ = 0;
  int64_t last_step_launches_ = 0;
  // NOTE: declared after its workspace, so the handle goes first.
  kernels::buffer gemm_workspace_;
  std::unique_ptr<cublas_gemm> gemm_;
  std::unique_ptr<cuda_ops> ops_;
};

} // namespace kvactor::model
