// kvactor::spawn_runtime from an engine configuration: loads the model
// folder, makes the device and its KV pools (model_runner), and spawns the
// actors over them (spawn_actors, also what tests call with runners of
// their own).

#include "actors/runtime/spawn.hpp"
#include "actors/runner/model_runner.hpp"
#include "actors/runner/precision.hpp"
#include "kvactor/kvactor.hpp"
#include "model/model_folder.hpp"
#include "model/quant/quant_format.hpp"
#include "model/shared_tokenizer.hpp"

#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace kvactor {

namespace {

// The block format of the same name (to_string gives quant_name's names).
std::optional<model::quant_format> quant_format_of(std::optional<number_format> f) {
  if (!f)
    return std::nullopt;
  return model::parse_quant_format(to_string(*f));
}

// An element type (f32, bf16), or nullopt for auto; quantised weights load
// as the checkpoint stores them (auto), and the CPU pass quantises them once.
std::optional<model::dtype> model_dtype(std::optional<number_format> f) {
  if (!f || quant_format_of(f))
    return std::nullopt;
  return *f == number_format::bf16 ? model::dtype::bf16 : model::dtype::f32;
}

// "q8_0, q4_0, ... and iq4_xs": every block format's name.
std::string quant_format_names() {
  const std::span<const model::quant_format> all = model::all_quant_formats();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " and " : ", ") +
           std::string(model::quant_name(all[i]));
  return out;
}

// The block formats are for weights only.
std::optional<std::string> misplaced_quant_format(const engine_config& config) {
  for (const auto& [what, f] :
       {std::pair{"activations", config.activations}, std::pair{"kv_dtype", config.kv_dtype}})
    if (quant_format_of(f))
      return std::string(what) + " '" + to_string(*f) + "': " + quant_format_names() +
             " are formats of weights";
  if (quant_format_of(config.weights) && config.activations == number_format::bf16)
    return std::string("weights '") + to_string(*config.weights) +
           "' with activations 'bf16': quantised weights multiply f32 activations";
  return std::nullopt;
}

} // namespace

int32_t default_block_size(const std::string& device) {
  return device == "cpu" ? cpu_block_size : cuda_block_size;
}

caf::expected<runtime_actor> spawn_runtime(caf::actor_system& sys, const engine_config& config) {
  auto invalid = [](std::string what) {
    return make_error(errc::invalid_config, "engine config: " + std::move(what));
  };
  if (config.max_num_batched_tokens <= 0 || config.max_num_seqs <= 0 || config.max_waiting <= 0)
    return invalid("max_num_batched_tokens, max_num_seqs and max_waiting must be positive");
  if (config.fault_jitter_ms < 0)
    return invalid("fault_jitter_ms " + std::to_string(config.fault_jitter_ms) + " is negative");
  if (config.block_size < 0)
    return invalid("block_size " + std::to_string(config.block_size) + " is negative");
  if (auto wrong = misplaced_quant_format(config))
    return invalid(std::move(*wrong));
  scheduler_config sched;
  sched.preemption = config.preemption;
  sched.batching = config.batching;
  sched.reservation = config.reservation;
  sched.prefix_caching = config.prefix_caching;
  sched.max_num_batched_tokens = config.max_num_batched_tokens;
  sched.max_num_seqs = config.max_num_seqs;

  bool unreadable = false; // the checkpoint's dtype, where auto asks for it
  auto dtypes = choose_precision(model_dtype(config.weights), model_dtype(config.activations),
                                 config.device.starts_with("cuda"), [&] {
                                   auto stored = model::checkpoint_matrix_dtype(config.model_dir);
                                   unreadable = !stored;
                                   return stored;
                                 });
  if (!dtypes)
    return make_error(unreadable ? errc::bad_model : errc::invalid_config, dtypes.error().message);
  auto loaded = model::load_model_folder(config.model_dir, dtypes->matrices);
  if (!loaded)
    return make_error(errc::bad_model, loaded.error().message);
  model::model_config mc = loaded->config;
  for (int64_t id : mc.eos_token_ids)
    sched.eos_tokens.push_back(static_cast<token_id>(id));

  model_runner_options options;
  options.device = config.device;
  options.kv_cache_bytes = config.kv_cache_bytes;
  options.gpu_memory_utilization = config.gpu_memory_utilization;
  options.swap_bytes = config.swap_bytes;
  options.kv_dtype =
    kv_dtype_of(config) == number_format::bf16 ? kernels::dtype::bf16 : kernels::dtype::f32;
  options.block_size =
    config.block_size != 0 ? config.block_size : default_block_size(config.device);
  options.max_num_batched_tokens = config.max_num_batched_tokens;
  options.max_num_seqs = config.max_num_seqs;
  options.num_threads = config.num_threads;
  options.activations = dtypes->activations;
  options.quantize = quant_format_of(config.weights);
  options.cuda_graphs = config.cuda_graphs;
  if (auto wrong = model_runner::check_options(mc, options))
    return invalid(std::move(*wrong));
  auto runner = model_runner::create(mc, std::move(loaded->weights), options);
  if (!runner)
    return make_error(errc::device_unusable, config.model_dir + ": " + runner.error().message);

  request_context requests;
  // NOTE: shared, so that the HTTP front's /tokenize uses this copy too.
  requests.tokenizer = model::share_tokenizer(config.model_dir, std::move(loaded->tok));
  requests.limits.vocab_size = static_cast<int32_t>(mc.vocab_size);
  if (config.batching == batching_mode::continuous) {
    requests.constraints = std::make_shared<constraint_compiler>(model::vocabulary_of(
      *requests.tokenizer, sched.eos_tokens, static_cast<size_t>(mc.vocab_size)));
    runner.value()->use_constraints(requests.constraints);
  } else {
    requests.no_constraints = std::string("output constraints need continuous batching (this "
                                          "engine batches '") +
                              to_string(config.batching) + "')";
  }
  const auto context = static_cast<int32_t>(
    std::min<int64_t>(mc.max_position_embeddings, std::numeric_limits<int32_t>::max()));
  if (config.max_model_len < 0 || config.max_model_len > context)
    return invalid("max_model_len " + std::to_string(config.max_model_len) + " is outside [0, " +
                   std::to_string(context) + "], the model's context");
  requests.limits.max_context = config.max_model_len > 0 ? config.max_model_len : context;
  sched.max_model_len = requests.limits.max_context;
  return spawn_actors(sys, std::move(runner.value()), std::move(requests), std::move(sched),
                      config.max_waiting, {config.fault_jitter_ms, config.fault_seed});
}

runtime_actor spawn_actors(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                           request_context requests, scheduler_config config, int32_t max_waiting,
                           jitter_options delays) {
  scheduler_parts parts;
  parts.config = std::move(config);
  parts.num_device_blocks = runner->num_device_blocks();
  parts.num_host_blocks = runner->num_host_blocks();
  parts.block_size = runner->block_size();
  parts.max_waiting = max_waiting;
  parts.executor = spawn_executor(sys, runner, delays);
  // NOTE: a stream of its own, so the block manager's draws do not shift the executor's.
  jitter_options refusals = delays;
  refusals.seed = ~refusals.seed;
  parts.blocks = spawn_block_manager(sys, parts.num_device_blocks, parts.block_size,
                                     parts.config.prefix_caching, refusals);
  parts.swap = spawn_swap(sys, parts.num_host_blocks, parts.blocks, parts.executor);
  runtime_parts front{{}, parts.blocks, parts.swap, parts.block_size, std::move(requests)};
  front.scheduler = spawn_scheduler(sys, std::move(parts));
  return spawn_runtime_actor(sys, std::move(front));
}

} // namespace kvactor
