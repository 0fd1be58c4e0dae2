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
// NOTE: written and compiled without a GPU; see model/README.md for what has
// and has not run.

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
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

private:
  cuda_transformer(const model_config& config, kernels::cuda_device& dev,
                   const kernels::kv_cache_view& cache, forward_limits limits,
                   device_weights weights);
  status allocate();
  // Checks the batch and enqueues the pass up to the logits in logits_.
  status enqueue_pass(const forward_batch& b);
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
  // NOTE: declared after its workspace, so the handle goes first.
  kernels::buffer gemm_workspace_;
  std::unique_ptr<cublas_gemm> gemm_;
  std::unique_ptr<cuda_ops> ops_;
};

} // namespace kvactor::model
