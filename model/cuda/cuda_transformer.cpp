#include "model/cuda/cuda_transformer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>

#include "base/assert.hpp"
#include "model/cuda/cuda_check.hpp"
#include "model/cuda/launch.hpp"
#include "model/rope.hpp"

namespace kvactor::model {
namespace {

// NOTE: cuBLAS's recommended workspace for Hopper; smaller GPUs use less.
constexpr std::size_t gemm_workspace_bytes = std::size_t{32} << 20;

constexpr const char* where = "forward pass (cuda)";

float* f32(const kernels::buffer& b) { return static_cast<float*>(b.data()); }

status take(kernels::device& dev, kernels::buffer& b, kernels::memory_kind kind, std::size_t bytes,
            const char* what) {
  auto m = dev.allocate(kind, bytes);
  if (!m)
    return error_in(where, std::string("not enough ") +
                                 (kind == kernels::memory_kind::device ? "device" : "pinned host") +
                                 " memory for " + what + " (" + std::to_string(bytes) + " bytes)");
  b = std::move(*m);
  return {};
}

} // namespace

result<std::unique_ptr<cuda_transformer>>
cuda_transformer::create(const model_config& config, const model_weights& weights,
                         kernels::device& dev, const kernels::kv_cache_view& cache,
                         forward_limits limits, dtype activations) {
  KVACTOR_ASSERT(dev.kind() == kernels::device_kind::cuda, "not a CUDA device");
  if (config.head_dim != 64 && config.head_dim != 128)
    return error_in(where, "the CUDA attention kernels take head_dim 64 or 128; the model has " +
                                 std::to_string(config.head_dim));
  auto& cuda = static_cast<kernels::cuda_device&>(dev);
  // NOTE: bf16 matrices on the device only with bf16 activations: cuBLAS
  // multiplies bf16 by bf16 only, and fp32 activations are never rounded.
  auto uploaded = device_weights::upload(weights, activations, dev,
                                         cuda.native_stream(kernels::streams::compute));
  if (!uploaded) return uploaded.error();
  std::unique_ptr<cuda_transformer> t(
    new cuda_transformer(config, cuda, cache, limits, std::move(*uploaded)));
  if (const status s = t->allocate(); !s) return s.error();
  return t;
}

cuda_transformer::cuda_transformer(const model_config& config, kernels::cuda_device& dev,
                                   const kernels::kv_cache_view& cache, forward_limits limits,
                                   device_weights weights)
  : transformer(config, dev, cache, limits),
    cuda_(dev),
    max_blocks_per_seq_(max_blocks_per_seq(config, cache.shape.block_size)),
    inv_freq_(rope_inv_freq(config)),
    qkv_stride_(config.q_size() + 2 * config.kv_size()),
    weights_(std::move(weights)) {
}

cuda_transformer::~cuda_transformer() {
  // NOTE: the buffers below are in use until the stream has run past the
  // last step, its host functions included (an event would not cover those).
  (void)cudaStreamSynchronize(cuda_.native_stream(kernels::streams::compute));
  drop_graphs();
}

void cuda_transformer::drop_graphs() {
  // NOTE: a graph launched and not yet run keeps what it needs (CUDA).
  for (auto& [key, entry] : graphs_)
    if (entry.exec != nullptr) (void)cudaGraphExecDestroy(entry.exec);
  graphs_.clear();
  num_graphs_ = 0;
}

cudaGraphExec_t cuda_transformer::graph_for(const forward_batch& b,
                                            const batch_upload_layout& layout) {
  if (cache_.base != graphs_cache_.base ||
      cache_.shape.num_blocks != graphs_cache_.shape.num_blocks) {
    drop_graphs(); // the pool moved (use_cache): the graphs would write the old one
    graphs_cache_ = cache_;
  }
  graph_entry& g = graphs_[graph_key{b.num_seqs(), b.num_sample_rows(), layout.table_width}];
  if (g.exec != nullptr || ++g.seen < 2 || num_graphs_ >= limits_.max_cuda_graphs) return g.exec;
  auto made = cuda_.capture(kernels::streams::compute, [&] {
    return static_cast<bool>(
      enqueue_forward(*ops_, config_, weights_.plan(), cache_, b, layout, buffers()));
  });
  if (const auto* why = std::get_if<std::string>(&made)) {
    std::fprintf(stderr, "kvactor: CUDA graphs off, steps launched kernel by kernel: %s\n",
                 why->c_str());
    graphs_off_ = true;
    drop_graphs();
    return nullptr;
  }
  g.exec = std::get<cudaGraphExec_t>(made);
  ++num_graphs_;
  return g.exec;
}

status cuda_transformer::allocate() {
  const auto t = static_cast<std::size_t>(limits_.max_num_tokens);
  const auto s = static_cast<std::size_t>(limits_.max_num_seqs);
  const auto h = static_cast<std::size_t>(config_.hidden_size);
  const auto inter = static_cast<std::size_t>(config_.intermediate_size);
  const auto vocab = static_cast<std::size_t>(config_.vocab_size);
  const std::size_t upload =
    batch_upload_layout::capacity(limits_.max_num_tokens, limits_.max_num_seqs, max_blocks_per_seq_,
                                  static_cast<int32_t>(inv_freq_.size()))
      .total_bytes;
  const std::size_t sampling =
    s * sizeof(kernels::gpu::sample_row) +
    static_cast<std::size_t>(max_sample_edits(limits_)) * sizeof(kernels::gpu::logit_edit);
  const std::size_t sampled = s * sizeof(kernels::gpu::sampled_row);
  const std::size_t bf16_rows = std::max(t, s);
  const std::size_t bf16_products = weights_.plan().matrices == dtype::bf16 ? 1 : 0;
  const std::size_t bf16_cache = cache_.shape.type == kernels::dtype::bf16 ? 1 : 0;
  using kernels::memory_kind;
  const struct {
    kernels::buffer& b;
    memory_kind kind;
    std::size_t bytes;
    const char* what;
  } wanted[] = {
    {hidden_, memory_kind::device, t * h * 4, "the hidden states"},
    {normed_, memory_kind::device, t * h * 4, "the normed hidden states"},
    {qkv_, memory_kind::device, t * static_cast<std::size_t>(qkv_stride_) * 4, "q|k|v"},
    {attn_, memory_kind::device, t * static_cast<std::size_t>(config_.q_size()) * 4,
     "the attention output"},
    {gate_, memory_kind::device, t * inter * 4, "the MLP gate"},
    {up_, memory_kind::device, t * inter * 4, "the MLP up projection"},
    {last_, memory_kind::device, s * h * 4, "the sampled rows"},
    {logits_, memory_kind::device, s * vocab * 4, "the logits"},
    {upload_, memory_kind::device, upload, "the step upload"},
    {sampling_, memory_kind::device, sampling, "the rows' sampling"},
    {sampled_, memory_kind::device, sampled, "the sampled tokens"},
    {x_bf16_, memory_kind::device,
     bf16_rows * static_cast<std::size_t>(bf16_input_width(config_)) * 2 * bf16_products,
     "the products' bf16 input rows"},
    {qkv_bf16_, memory_kind::device, t * static_cast<std::size_t>(qkv_stride_) * 2 * bf16_cache,
     "bf16 q|k|v"},
    {attn_bf16_, memory_kind::device,
     t * static_cast<std::size_t>(config_.q_size()) * 2 * bf16_cache, "the bf16 attention output"},
    {upload_staging_, memory_kind::pinned_host, upload, "the step upload"},
    {logits_host_, memory_kind::pinned_host, s * vocab * 4, "the logits"},
    {sampling_staging_, memory_kind::pinned_host, sampling, "the rows' sampling"},
    {sampled_host_, memory_kind::pinned_host, sampled, "the sampled tokens"},
    {gemm_workspace_, memory_kind::device, gemm_workspace_bytes, "the cuBLAS workspace"},
  };
  for (const auto& w : wanted)
    if (w.bytes > 0)
      if (const status ok = take(dev_, w.b, w.kind, w.bytes, w.what); !ok) return ok;
  auto gemm = cublas_gemm::create(cuda_.native_stream(kernels::streams::compute),
                                  gemm_workspace_.data(), gemm_workspace_bytes);
  if (!gemm) return gemm.error();
  gemm_ = std::move(*gemm);
  ops_ = std::make_unique<cuda_ops>(cuda_.native_stream(kernels::streams::compute), *gemm_,
                                    cuda_.split_workspace(kernels::streams::compute));
  return {};
}

status cuda_transformer::enqueue_pass(const forward_batch& b) {
  check_batch(b);
  if (b.max_blocks_per_seq > max_blocks_per_seq_)
    return error_in(where, "a block table of " + std::to_string(b.max_blocks_per_seq) +
                               " blocks is longer than the model's context of " +
                               std::to_string(config_.max_position_embeddings) + " tokens allows");
  KVACTOR_ASSERT(!in_flight_.exchange(true), "a step enqueued while the last one runs");
  const cudaStream_t stream = cuda_.native_stream(kernels::streams::compute);
  // NOTE: every decode step uploads its tables graph_table_width wide, as a
  // graph or not, so that both plan the attention alike (the same bits).
  const auto layout = batch_upload_layout::of(
    b, static_cast<int32_t>(inv_freq_.size()),
    b.is_decode() ? graph_table_width(b.max_blocks_per_seq, max_blocks_per_seq_) : 0);
  // NOTE: captured before the upload is queued, so that the capture starts
  // on a stream with nothing of this step in it.
  const bool graphed = b.is_decode() && limits_.max_cuda_graphs > 0 && !graphs_off_;
  const cudaGraphExec_t graph = graphed ? graph_for(b, layout) : nullptr;
  if (const status s = stage_upload(b, layout, stream); !s) return s;
  if (graph != nullptr) {
    if (!cuda_.launch_graph(kernels::streams::compute, graph))
      return error_in(where, "cudaGraphLaunch failed");
    ++graph_steps_;
    last_step_launches_ = 0;
    return {};
  }
  const int64_t before = ops_->num_launches();
  const status s = enqueue_forward(*ops_, config_, weights_.plan(), cache_, b, layout, buffers());
  last_step_launches_ = ops_->num_launches() - before;
  return s;
}

status cuda_transformer::enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done) {
  const forward_batch& b = *batch;
  if (const status s = enqueue_pass(b); !s) return s;
  const cudaStream_t stream = cuda_.native_stream(kernels::streams::compute);
  const auto num_logits =
    static_cast<std::size_t>(b.num_sample_rows()) * static_cast<std::size_t>(config_.vocab_size);
  if (num_logits > 0)
    KVACTOR_CUDA_TRY(cudaMemcpyAsync(logits_host_.data(), logits_.data(),
                                     num_logits * sizeof(float), cudaMemcpyDeviceToHost, stream));
  // NOTE: the callback runs once the stream has run everything before it
  // (the logits copy included); the next step's copy into logits_host_ waits
  // for it. Through the device, whose watchdog answers for it on a fault.
  const float* host = f32(logits_host_);
  (void)cuda_.record(kernels::streams::compute, [this, done = std::move(done), host, num_logits] {
    in_flight_ = false;
    done(std::span<const float>(host, num_logits));
  });
  return {};
}

status cuda_transformer::enqueue_sampled(std::shared_ptr<const forward_batch> batch,
                                         const device_sampling_batch& sampling,
                                         sampled_callback done) {
  const forward_batch& b = *batch;
  const auto num_rows = static_cast<int32_t>(sampling.rows().size());
  KVACTOR_ASSERT(num_rows == b.num_sample_rows(), "a sampling row per sampled row of the batch");
  KVACTOR_ASSERT(static_cast<int64_t>(sampling.edits().size()) <= max_sample_edits(limits_),
                 "more logit edits than the device's sampling buffer holds");
  if (const status s = enqueue_pass(b); !s) return s;
  if (const status s = enqueue_sampler(sampling, num_rows); !s) return s;
  const auto* host = static_cast<const kernels::gpu::sampled_row*>(sampled_host_.data());
  (void)cuda_.record(kernels::streams::compute, [this, done = std::move(done), host, num_rows] {
    in_flight_ = false;
    done(std::span<const kernels::gpu::sampled_row>(host, static_cast<std::size_t>(num_rows)));
  });
  return {};
}

status cuda_transformer::enqueue_sampler(const device_sampling_batch& sampling, int32_t num_rows) {
  if (num_rows == 0) return {};
  const cudaStream_t stream = cuda_.native_stream(kernels::streams::compute);
  // NOTE: rows first, then edits, at the offsets of the device buffer; the
  // staging buffer is free as the upload's is (steps run one at a time).
  const std::size_t rows_bytes = sampling.rows().size_bytes();
  const std::size_t edits_at = static_cast<std::size_t>(limits_.max_num_seqs) *
                               sizeof(kernels::gpu::sample_row);
  auto* staging = static_cast<std::byte*>(sampling_staging_.data());
  auto* device = static_cast<std::byte*>(sampling_.data());
  std::memcpy(staging, sampling.rows().data(), rows_bytes);
  KVACTOR_CUDA_TRY(
    cudaMemcpyAsync(device, staging, rows_bytes, cudaMemcpyHostToDevice, stream));
  if (!sampling.edits().empty()) {
    std::memcpy(staging + edits_at, sampling.edits().data(), sampling.edits().size_bytes());
    KVACTOR_CUDA_TRY(cudaMemcpyAsync(device + edits_at, staging + edits_at,
                                     sampling.edits().size_bytes(), cudaMemcpyHostToDevice,
                                     stream));
  }
  bool any_logprobs = false;
  for (const kernels::gpu::sample_row& r : sampling.rows())
    any_logprobs = any_logprobs || r.num_logprobs >= 0;
  auto* rows = reinterpret_cast<const kernels::gpu::sample_row*>(device);
  auto* edits = reinterpret_cast<kernels::gpu::logit_edit*>(device + edits_at);
  auto* out = static_cast<kernels::gpu::sampled_row*>(sampled_.data());
  KVACTOR_CUDA_TRY(cuda_launch::sample_rows(f32(logits_), config_.vocab_size, num_rows, rows,
                                            edits, !sampling.edits().empty(), any_logprobs, out,
                                            stream));
  KVACTOR_CUDA_TRY(cudaMemcpyAsync(sampled_host_.data(), out,
                                   static_cast<std::size_t>(num_rows) * sizeof(*out),
                                   cudaMemcpyDeviceToHost, stream));
  return {};
}

status cuda_transformer::stage_upload(const forward_batch& b, const batch_upload_layout& layout,
                                      cudaStream_t stream) {
  // NOTE: steps run one at a time (transformer.hpp), so the previous step's
  // copy out of the staging buffer has completed: the batch is packed
  // straight into it, with no host function in the stream.
  void* staging = upload_staging_.data();
  pack_batch(b, inv_freq_, layout,
             std::span<std::byte>(static_cast<std::byte*>(staging), layout.total_bytes));
  KVACTOR_CUDA_TRY(
    cudaMemcpyAsync(upload_.data(), staging, layout.total_bytes, cudaMemcpyHostToDevice, stream));
  return {};
}

forward_buffers cuda_transformer::buffers() const {
  forward_buffers b;
  b.weights = weights_.data();
  b.upload = static_cast<const std::byte*>(upload_.data());
  b.hidden = f32(hidden_);
  b.normed = f32(normed_);
  b.qkv = f32(qkv_);
  b.attn = f32(attn_);
  b.gate = f32(gate_);
  b.up = f32(up_);
  b.last = f32(last_);
  b.logits = f32(logits_);
  b.x_bf16 = static_cast<uint16_t*>(x_bf16_.data());
  b.qkv_bf16 = static_cast<uint16_t*>(qkv_bf16_.data());
  b.attn_bf16 = static_cast<uint16_t*>(attn_bf16_.data());
  return b;
}

} // namespace kvactor::model
