#include "actors/runner/model_runner.hpp"

#include "base/assert.hpp"
#include "kernels/ops.hpp"
#include "model/logprobs.hpp"
#include "model/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace kvactor {

namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

} // namespace

// A step's plan and everything the device reads from it, alive until its
// last task has run.
struct model_runner::step_job {
  step_plan plan;
  clock::time_point started; // when enqueued (the compute stream is idle then)
  double seconds() const { return seconds_since(started); }
  std::function<void(step_output)> done;
};

model_runner::model_runner(const model::model_config& config, model::model_weights weights)
  : config_(config), weights_(std::make_unique<model::model_weights>(std::move(weights))) {}

model_runner::~model_runner() {
  // NOTE: tasks on the streams point at the forward pass and the pools;
  // drain them before any member goes.
  if (dev_)
    dev_->synchronize();
}

std::optional<std::string> model_runner::check_options(const model::model_config& config,
                                                      const model_runner_options& options) {
  if (options.block_size <= 0)
    return "block_size must be positive";
  const kernels::kv_cache_shape unit =
    model::transformer::cache_shape(config, 1, options.block_size, options.kv_dtype);
  if (options.kv_cache_bytes != 0 &&
      kernels::num_blocks_for_budget(options.kv_cache_bytes, unit) <= 0)
    return "kv_cache_bytes " + std::to_string(options.kv_cache_bytes) +
           " holds no KV block (one block of all layers takes " +
           std::to_string(unit.total_bytes()) + " bytes)";
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1))
    return "gpu_memory_utilization " + std::to_string(options.gpu_memory_utilization) +
           " is outside (0, 1]";
  return std::nullopt;
}

kvactor::result<std::shared_ptr<model_runner>>
model_runner::create(const model::model_config& config, model::model_weights weights,
                     const model_runner_options& options) {
  if (auto wrong = check_options(config, options))
    return kvactor::error_in("engine config", *wrong);
  std::shared_ptr<model_runner> r(new model_runner(config, std::move(weights)));
  // Both pools hold options.kv_dtype: a bf16 block takes half the bytes of an f32 one.
  auto shape_of = [&](int64_t num_blocks) {
    return model::transformer::cache_shape(config, num_blocks, options.block_size,
                                           options.kv_dtype);
  };
  const kernels::kv_cache_shape unit = shape_of(1);
  const int64_t kv_bytes = options.kv_cache_bytes == 0 && options.device == "cpu"
                             ? default_kv_cache_bytes
                             : options.kv_cache_bytes;
  // NOTE: sized by the GPU: a pool of one block while the forward pass takes
  // its memory, then the pool that the rest allows (size_by_gpu_memory).
  const bool sized_by_gpu = kv_bytes == 0;
  const int64_t num_device_blocks =
    sized_by_gpu ? 1 : kernels::num_blocks_for_budget(kv_bytes, unit);
  const int64_t num_host_blocks =
    options.swap_bytes > 0 ? kernels::num_blocks_for_budget(options.swap_bytes, unit) : 0;

  kernels::device_options dev_options;
  dev_options.num_threads = options.num_threads;
  // NOTE: the CPU arenas round allocations up to their alignment; 1 MiB of
  // slack covers that.
  dev_options.device_bytes = num_device_blocks * unit.total_bytes() + (int64_t{1} << 20);
  dev_options.pinned_bytes = num_host_blocks * unit.total_bytes() + (int64_t{1} << 20);
  model::forward_limits limits{options.max_num_batched_tokens, options.max_num_seqs,
                               options.max_sample_edits};
  if (!options.cuda_graphs) limits.max_cuda_graphs = 0;
  // NOTE: a CUDA forward pass stages each step's upload and logits in pinned memory.
  if (options.device != "cpu" && limits.max_num_tokens > 0 && limits.max_num_seqs > 0)
    dev_options.pinned_bytes +=
      model::transformer::pinned_host_bytes(config, limits, options.block_size);
  auto dev = kernels::make_device(options.device, dev_options);
  if (!dev)
    return kvactor::error_in("device '" + options.device + "'", dev.error().message);
  r->dev_ = std::move(dev.value());
  if (const status s = model::transformer::check_cache_dtype(r->dev_->kind(), options.kv_dtype); !s)
    return s.error();

  auto device_cache = kernels::allocate_kv_cache(
    *r->dev_, kernels::memory_kind::device, shape_of(num_device_blocks));
  if (!device_cache)
    return kvactor::error_in("device '" + options.device + "'",
                               "cannot allocate the KV cache of " +
                                 std::to_string(num_device_blocks) + " blocks");
  r->device_cache_ = std::move(*device_cache);
  if (num_host_blocks > 0) {
    auto host_cache = kernels::allocate_kv_cache(
      *r->dev_, kernels::memory_kind::pinned_host, shape_of(num_host_blocks));
    if (!host_cache)
      return kvactor::error_in("device '" + options.device + "'",
                                 "cannot allocate the pinned swap pool of " +
                                   std::to_string(num_host_blocks) + " blocks");
    r->host_cache_ = std::move(*host_cache);
  } else {
    r->host_cache_.view.shape = shape_of(0);
  }

  auto forward = model::transformer::create(config, *r->weights_, *r->dev_, r->device_cache_.view,
                                            limits, options.activations, options.quantize);
  if (!forward)
    return forward.error();
  r->forward_ = std::move(forward.value());
  // NOTE: the CPU pass has packed the matrices; the CUDA pass is left as it
  // is. What loading freed lies inside the heap, which glibc returns to the
  // system only when trimmed (45 MiB on a 1B Llama GGUF file).
  if (r->dev_->kind() == kernels::device_kind::cpu) {
    r->weights_->release_packed_matrices();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
  }
  if (sized_by_gpu)
    if (const status s = r->size_by_gpu_memory(unit, options.gpu_memory_utilization); !s)
      return s.error();
  return r;
}

status model_runner::size_by_gpu_memory(const kernels::kv_cache_shape& unit, double utilization) {
  const kernels::memory_info m = dev_->memory(kernels::memory_kind::device);
  const auto mib = [](int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  const auto allowed = static_cast<int64_t>(utilization * static_cast<double>(m.total_bytes));
  // NOTE: the one-block pool goes before the real one comes.
  const int64_t in_use = m.total_bytes - m.free_bytes - device_cache_.view.shape.total_bytes();
  const int64_t num_blocks = kernels::num_blocks_for_budget(allowed - in_use, unit);
  if (num_blocks <= 0)
    return kvactor::error_in(
      "device '" + dev_->name() + "'",
      "gpu_memory_utilization " + std::to_string(utilization) + " allows " + mib(allowed) +
        " of " + mib(m.total_bytes) + ", and " + mib(in_use) +
        " are in use already (the weights, the forward pass's buffers, other processes): no "
        "room for the KV cache");
  kernels::kv_cache_shape shape = unit;
  shape.num_blocks = num_blocks;
  device_cache_ = {};
  auto cache = kernels::allocate_kv_cache(*dev_, kernels::memory_kind::device, shape);
  if (!cache)
    return kvactor::error_in("device '" + dev_->name() + "'",
                               "cannot allocate the KV cache of " + std::to_string(num_blocks) +
                                 " blocks (" + mib(shape.total_bytes()) + ")");
  device_cache_ = std::move(*cache);
  forward_->use_cache(device_cache_.view);
  std::fprintf(stderr,
               "kvactor: KV cache of %lld blocks (%s) on %s: gpu_memory_utilization %.2f of %s, "
               "%s in use before it\n",
               static_cast<long long>(num_blocks), mib(shape.total_bytes()).c_str(),
               dev_->name().c_str(), utilization, mib(m.total_bytes).c_str(),
               mib(in_use).c_str());
  return {};
}

void model_runner::run(step_plan plan, std::function<void(step_output)> done) {
  auto job = std::make_shared<step_job>();
  job->plan = std::move(plan);
  job->done = std::move(done);
  const step_plan& p = job->plan;
  // NOTE: steps run one at a time, so the compute stream is idle here: the
  // step's time on it starts now, and the buffers it read last (the copy
  // pairs' staging, the forward pass's) are free to write. One host
  // function per step, its completion.
  job->started = clock::now();
  for (seq_id id : p.released)
    tables_.erase(id);

  if (!p.copies.empty()) {
    std::vector<int32_t> pairs;
    for (const block_copy& c : p.copies) {
      pairs.push_back(c.src);
      pairs.push_back(c.dst);
    }
    if (const status s = upload_copy_pairs(pairs); !s) {
      std::fprintf(stderr, "kvactor: %s\n", s.error().message.c_str());
      std::abort();
    }
    const kernels::kv_cache_view& v = device_cache_.view;
    kernels::copy_blocks_params cp{};
    cp.cache = v.base;
    cp.pairs = static_cast<const int32_t*>(copy_pairs_.data()); // [num_pairs, 2] in device memory
    cp.num_pairs = static_cast<int32_t>(p.copies.size());
    cp.num_layers = v.shape.num_layers;
    cp.num_blocks = v.shape.num_blocks;
    cp.block_bytes = v.shape.block_bytes();
    kernels::copy_blocks(*dev_, kernels::streams::compute, cp);
  }

  forget_histories(p);
  if (p.seqs.empty()) {
    dev_->record(kernels::streams::compute, [job] {
      job->done(step_output{job->plan.step_id, {}, job->seconds()});
    });
    return;
  }
  std::vector<model::sequence_chunk> chunks;
  chunks.reserve(p.seqs.size());
  for (const scheduled_sequence& s : p.seqs) {
    std::vector<block_id>& table = tables_[s.id];
    s.blocks.apply_to(table);
    chunks.push_back({s.start, s.tokens, table, s.sample});
  }
  // NOTE: build copies the tables; the spans into tables_ end here.
  auto batch =
    std::make_shared<const model::forward_batch>(model::forward_batch::build(chunks, block_size()));
  const status enqueued = enqueue_step(job, std::move(batch));
  // NOTE: a step that cannot be enqueued leaves the device unusable (CUDA
  // errors are sticky; the step may have hit a fault still being enqueued):
  // a fault, which answers this step and every other in flight.
  if (!enqueued) {
    std::fprintf(stderr, "kvactor: %s\n", enqueued.error().message.c_str());
    KVACTOR_ASSERT(on_fault_ != nullptr, "a step failed with no one to hear of it");
    on_fault_(enqueued.error().message);
  }
}

void model_runner::forget_histories(const step_plan& plan) {
  for (seq_id id : plan.released) {
    histories_.erase(id);
    matchers_.erase(id);
  }
}

std::vector<model_runner::sample_row> model_runner::rows_to_sample(const step_plan& plan) {
  std::vector<sample_row> rows;
  rows.reserve(plan.seqs.size());
  for (const scheduled_sequence& s : plan.seqs) {
    model::sampling_history* history = nullptr;
    if (s.sampling.penalises()) {
      // NOTE: the first plan of the sequence carries its prompt (step.hpp);
      // the history is a mirror of the scheduler's tokens, guarded below.
      auto [at, fresh] = histories_.try_emplace(s.id, s.history_prompt);
      KVACTOR_ASSERT(fresh == !s.history_prompt.empty(),
                     "a sequence's prompt for its penalties missing or sent twice");
      history = &at->second;
    }
    model::token_matcher* matcher = nullptr;
    if (!s.constraint.empty()) {
      KVACTOR_ASSERT(constraints_ != nullptr, "a constrained sequence where none are compiled");
      auto compiled = constraints_->compile(s.constraint);
      KVACTOR_ASSERT(compiled.has_value(), "a constraint admitted that does not compile");
      KVACTOR_ASSERT(!matchers_.contains(s.id), "a sequence's constraint sent twice");
      matcher = &matchers_.emplace(s.id, model::token_matcher(*compiled)).first->second;
    } else if (auto at = matchers_.find(s.id); at != matchers_.end()) {
      matcher = &at->second;
    }
    if (!s.sample)
      continue;
    KVACTOR_ASSERT(!history || history->num_outputs() == s.num_output_tokens,
                   "the runner's sampling history lost step with the scheduler's tokens");
    rows.push_back({&s, history, matcher});
  }
  return rows;
}

status model_runner::enqueue_step(std::shared_ptr<step_job> job,
                                  std::shared_ptr<const model::forward_batch> batch) {
  const clock::time_point packing_started = clock::now();
  std::vector<sample_row> rows = rows_to_sample(job->plan);
  // NOTE: a constrained row's mask is the host's: a step with one samples
  // on the host.
  const bool constrained =
    std::ranges::any_of(rows, [](const sample_row& r) { return r.matcher != nullptr; });
  if (forward_->samples_on_device() && !constrained) {
    device_sampling_.clear();
    for (const sample_row& r : rows)
      device_sampling_.add(r.seq->sampling, static_cast<uint64_t>(r.seq->num_output_tokens),
                           r.history, r.seq->num_logprobs, config_.vocab_size);
    // NOTE: a step whose rows need more logit edits than the device holds
    // (long histories with penalties) samples on the host instead.
    if (static_cast<int64_t>(device_sampling_.edits().size()) <=
        model::transformer::max_sample_edits(forward_->limits())) {
      const double packing = seconds_since(packing_started);
      return forward_->enqueue_sampled(
        std::move(batch), device_sampling_,
        [this, job, rows = std::move(rows), packing](
          std::span<const kernels::gpu::sampled_row> out) {
          const clock::time_point started = clock::now();
          step_output o{job->plan.step_id, {}};
          o.sampled.reserve(rows.size());
          for (size_t i = 0; i < rows.size(); ++i) {
            const scheduled_sequence& s = *rows[i].seq;
            if (rows[i].history)
              rows[i].history->add_output(out[i].token);
            o.sampled.push_back({s.id, out[i].token,
                                 s.num_logprobs >= 0
                                   ? model::logprobs_of(out[i], s.num_logprobs, config_.vocab_size)
                                   : model::token_logprobs{},
                                 false, out[i].no_finite_logit != 0});
          }
          // NOTE: the host's part; the sampler's kernels count in the forward pass.
          o.sampling_seconds = packing + seconds_since(started);
          o.forward_seconds = job->seconds();
          job->done(std::move(o));
        });
    }
    ++steps_sampled_on_host_;
  }
  return forward_->enqueue(std::move(batch), [this, job, rows = std::move(rows)](
                                               std::span<const float> logits) {
    step_output out{job->plan.step_id, {}};
    const clock::time_point sampling_started = clock::now();
    out.sampled = sample(rows, logits);
    out.sampling_seconds = seconds_since(sampling_started);
    out.forward_seconds = job->seconds();
    job->done(std::move(out));
  });
}

std::vector<sampled_token> model_runner::sample(const std::vector<sample_row>& rows,
                                                std::span<const float> logits) {
  const auto vocab = static_cast<size_t>(config_.vocab_size);
  std::vector<sampled_token> sampled(rows.size());
  // NOTE: each row reads its own logits and writes its own history and
  // result, so the rows run in parallel on the device's threads.
  dev_->host_parallel_for(static_cast<int64_t>(rows.size()), [&](int64_t i) {
    const sample_row& row = rows[size_t(i)];
    const scheduled_sequence& s = *row.seq;
    const auto r = logits.subspan(size_t(i) * vocab, vocab);
    const auto step = static_cast<uint64_t>(s.num_output_tokens);
    token_id t;
    bool must_end = false;
    bool no_finite_logit = false;
    if (row.matcher) {
      // NOTE: the logprobs stay the model's; only the draw is masked.
      thread_local std::vector<float> masked;
      masked.assign(r.begin(), r.end());
      model::apply_mask(masked, *row.matcher->mask());
      t = model::sample(masked, s.sampling, step, row.history);
      no_finite_logit = !std::isfinite(r[size_t(t)]);
      // NOTE: a grammar whose next characters no token spells leaves every
      // logit refused: the sequence ends there, on an end token where the
      // model has one (its text stays inside the grammar).
      if (!row.matcher->accept(t)) {
        must_end = true;
        if (!config_.eos_token_ids.empty())
          t = static_cast<token_id>(config_.eos_token_ids.front());
      }
      must_end = must_end || row.matcher->must_end();
    } else {
      t = model::sample(r, s.sampling, step, row.history);
      // NOTE: a draw takes a finite logit wherever the row has one (NaN and
      // -inf weigh nothing): one that is not finite means it had none.
      no_finite_logit = !std::isfinite(r[size_t(t)]);
    }
    if (row.history)
      row.history->add_output(t);
    sampled[size_t(i)] = {
      s.id, t,
      s.num_logprobs >= 0 ? model::logprobs(r, t, s.num_logprobs) : model::token_logprobs{},
      must_end, no_finite_logit};
  });
  return sampled;
}

status model_runner::upload_copy_pairs(const std::vector<int32_t>& pairs) {
  const size_t bytes = pairs.size() * sizeof(int32_t);
  if (bytes > copy_pairs_.size()) {
    // NOTE: rare (the first copies, or more than ever before); the streams
    // may still read the old buffers until they drain.
    dev_->synchronize();
    const size_t capacity = std::max<size_t>(bytes, 64 * 2 * sizeof(int32_t));
    auto staging = dev_->allocate(kernels::memory_kind::pinned_host, capacity);
    auto device = dev_->allocate(kernels::memory_kind::device, capacity);
    if (!staging || !device)
      return kvactor::error_in("device", "no memory for a step's " +
                                             std::to_string(pairs.size() / 2) + " block copies");
    copy_pairs_staging_ = std::move(*staging);
    copy_pairs_ = std::move(*device);
  }
  // NOTE: the kernel reads device memory; the staging buffer is free (the
  // compute stream is idle, see run).
  std::memcpy(copy_pairs_staging_.data(), pairs.data(), bytes);
  dev_->copy_async(kernels::streams::compute, copy_pairs_.data(), copy_pairs_staging_.data(),
                   bytes);
  return {};
}

void model_runner::swap(swap_direction direction, std::vector<block_copy> copies,
                        std::function<void()> done) {
  const bool out = direction == swap_direction::out;
  const kernels::stream_id stream = out ? kernels::streams::swap_out : kernels::streams::swap_in;
  // NOTE: the copy starts after the compute work enqueued so far: a
  // swap-out reads what the last step wrote, a swap-in overwrites blocks
  // that a step still in flight may have been reading before they were freed.
  dev_->wait_event(stream, dev_->record(kernels::streams::compute));
  std::vector<kernels::block_pair> pairs;
  pairs.reserve(copies.size());
  for (const block_copy& c : copies)
    pairs.push_back({c.src, c.dst});
  const kernels::kv_cache_view& src = out ? device_cache_.view : host_cache_.view;
  const kernels::kv_cache_view& dst = out ? host_cache_.view : device_cache_.view;
  // NOTE: the returned event is dropped here, not in the callback (a callback
  // must not destroy the last reference to an event).
  (void)kernels::swap_blocks(*dev_, stream, src, dst, std::move(pairs), std::move(done));
}

} // namespace kvactor
