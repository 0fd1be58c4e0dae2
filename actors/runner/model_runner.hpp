#pragma once
// model_runner: the real step_runner — a loaded model on a device, its KV
// pools and the forward pass.
//
//   run(plan)  : apply the plan's block-table changes (on the caller's thread),
//                then on the compute stream [copy_blocks (CoW)] -> forward -> sample -> done
//   swap(out)  : swap_out stream, after the compute work enqueued so far
//   swap(in)   : swap_in stream,  likewise
//
// Every call only enqueues and returns at once; `done` runs on a device
// thread. No CAF in here.

#include "kvactor/defaults.hpp"
#include "actors/runner/constraint_compiler.hpp"
#include "actors/runner/step_runner.hpp"
#include "kernels/device.hpp"
#include "kernels/kv_cache.hpp"
#include "model/config.hpp"
#include "base/result.hpp"
#include "model/forward/transformer.hpp"
#include "model/sampling_history.hpp"
#include "model/weights.hpp"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvactor {

struct model_runner_options {
  std::string device = "cpu";         // cpu, cuda, cuda:N
  // The device pool. 0: automatic: default_kv_cache_bytes on the CPU; on a
  // GPU what gpu_memory_utilization of its memory leaves once the weights
  // and the forward pass's buffers are in (and what other processes use).
  int64_t kv_cache_bytes = default_kv_cache_bytes;
  double gpu_memory_utilization = default_gpu_memory_utilization; // (0, 1]
  int64_t swap_bytes = default_swap_bytes;         // pinned host pool (0: no swapping)
  kernels::dtype kv_dtype = kernels::dtype::f32; // both pools' elements (f32 or bf16)
  int32_t block_size = cuda_block_size;
  int32_t max_num_batched_tokens = default_max_num_batched_tokens;
  int32_t max_num_seqs = default_max_num_seqs;
  int32_t num_threads = 0;            // CPU device threads; 0: all cores
  model::dtype activations = model::dtype::f32; // the products' input rows (transformer::create)
  std::optional<model::quant_format> quantize;  // dense matrices quantised to this (CPU)
  int64_t max_sample_edits = 0; // the device sampler's logit edits per step (forward_limits)
  bool cuda_graphs = true;      // decode steps as CUDA graphs (forward_limits::max_cuda_graphs)
};

class model_runner final : public step_runner {
public:
  // What is wrong with `options` for a model of `config` before any device
  // work (the block size, a device pool that holds no block), or nullopt.
  static std::optional<std::string> check_options(const model::model_config& config,
                                                  const model_runner_options& options);
  // Makes the device, sizes and allocates both pools and prepares the
  // forward pass; failures name what is wrong (check_options's first).
  static kvactor::result<std::shared_ptr<model_runner>> create(const model::model_config& config,
                                                             model::model_weights weights,
                                                             const model_runner_options& options);
  ~model_runner() override; // waits for the device's streams

  void run(step_plan plan, std::function<void(step_output)> done) override;
  void swap(swap_direction direction, std::vector<block_copy> copies,
            std::function<void()> done) override;
  // The device's watchdog (kernels/cuda_device.hpp) reports its faults; so
  // does a step that cannot be enqueued.
  void set_fault_handler(std::function<void(const std::string&)> handler) override {
    on_fault_ = handler;
    dev_->set_fault_handler(std::move(handler));
  }

  int32_t num_device_blocks() const override {
    return static_cast<int32_t>(device_cache_.view.shape.num_blocks);
  }
  int32_t num_host_blocks() const override {
    return static_cast<int32_t>(host_cache_.view.shape.num_blocks);
  }
  int32_t block_size() const override { return device_cache_.view.shape.block_size; }

  const model::model_config& config() const { return config_; }
  // Where constrained sequences' grammars come from (none: a constrained
  // sequence is a broken invariant; the request actor refuses them first).
  void use_constraints(std::shared_ptr<constraint_compiler> constraints) {
    constraints_ = std::move(constraints);
  }
  // Steps sampled on the host from their logits by a pass that samples on
  // the device: their rows' logit edits overflowed its buffer. Read between
  // steps.
  int64_t num_steps_sampled_on_host() const { return steps_sampled_on_host_; }
  // Constrained sequences whose grammar state the runner keeps. Read
  // between steps.
  size_t num_grammar_states() const { return matchers_.size(); }

private:
  model_runner(const model::model_config& config, model::model_weights weights);

  model::model_config config_;
  std::unique_ptr<model::model_weights> weights_;
  std::unique_ptr<kernels::device> dev_;
  kernels::kv_cache device_cache_;
  kernels::kv_cache host_cache_; // num_blocks 0 when there is no swap space
  std::unique_ptr<model::transformer> forward_;
  // A step's copy-on-write pairs [num_pairs, 2]: written into pinned staging,
  // copied to device memory, read by the copy kernel (grown on demand).
  kernels::buffer copy_pairs_staging_; // pinned host
  kernels::buffer copy_pairs_;         // device
  status upload_copy_pairs(const std::vector<int32_t>& pairs);
  // Each live sequence's block table, built from the plans' changes; only
  // run() touches it, on the executor's thread.
  std::unordered_map<seq_id, std::vector<block_id>> tables_;
  // The sampling history of each live sequence whose sampling penalises
  // repeats: run() adds and forgets them, the step's completion adds its
  // tokens to them — one step after another.
  std::unordered_map<seq_id, model::sampling_history> histories_;
  void forget_histories(const step_plan& plan); // of its released sequences
  // Each live constrained sequence's place in its grammar, kept as the
  // histories are.
  std::shared_ptr<constraint_compiler> constraints_;
  std::unordered_map<seq_id, model::token_matcher> matchers_;
  struct step_job;
  // A sequence of the step that samples, its history (penalised only) and
  // its grammar (constrained only).
  struct sample_row {
    const scheduled_sequence* seq;
    model::sampling_history* history;
    model::token_matcher* matcher;
  };
  std::vector<sample_row> rows_to_sample(const step_plan& plan);
  // The forward pass and sampling, on the device when the pass samples
  // there (device_sampling_ packed here), else from the logits on the host.
  status enqueue_step(std::shared_ptr<step_job> job,
                      std::shared_ptr<const model::forward_batch> batch);
  model::device_sampling_batch device_sampling_;
  int64_t steps_sampled_on_host_ = 0;
  // A token for each row from its row of `logits` [num_sample_rows, vocab],
  // the rows in parallel.
  std::vector<sampled_token> sample(const std::vector<sample_row>& rows,
                                    std::span<const float> logits);
  // The KV pool that `utilization` of the GPU's memory leaves (the forward
  // pass created over a pool of one block).
  status size_by_gpu_memory(const kernels::kv_cache_shape& unit, double utilization);
  std::function<void(const std::string&)> on_fault_;
};

} // namespace kvactor
