// kvactor::spawn_runtime from an engine configuration: loads the model
// folder, makes the device and its KV pools (model_runner), and spawns the
// actors over them.

#include "actors/actors.hpp"
#include "actors/model_runner.hpp"
#include "actors/precision.hpp"
#include "kvactor/kvactor.hpp"
#include "model/model_folder.hpp"

#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

namespace kvactor {

namespace {

caf::error invalid(std::string message) {
  return caf::make_error(caf::sec::invalid_argument, std::move(message));
}

// The value named `name` among `choices`, or an error naming the field.
template <class T>
caf::expected<T> choose(const char* field, const std::string& name,
                        std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [n, value] : choices) {
    if (name == n)
      return value;
    names += names.empty() ? std::string(n) : std::string(" or ") + n;
  }
  return invalid(std::string("engine config: ") + field + " '" + name + "' is not " + names);
}

} // namespace

int32_t default_block_size(const std::string& device) {
  return device == "cpu" ? cpu_block_size : cuda_block_size;
}

caf::expected<runtime_actor> spawn_runtime(caf::actor_system& sys, const engine_config& config) {
  scheduler_config sched;
  auto preemption = choose<preemption_mode>(
    "preemption", config.preemption,
    {{"swap", preemption_mode::swap}, {"recompute", preemption_mode::recompute}});
  auto batching = choose<batching_mode>(
    "batching", config.batching,
    {{"continuous", batching_mode::continuous},
     {"static", batching_mode::fixed},
     {"padded", batching_mode::padded}});
  auto reservation = choose<kv_reservation>(
    "kv_reservation", config.kv_reservation,
    {{"paged", kv_reservation::paged}, {"contiguous", kv_reservation::contiguous}});
  if (!preemption)
    return preemption.error();
  if (!batching)
    return batching.error();
  if (!reservation)
    return reservation.error();
  sched.preemption = *preemption;
  sched.batching = *batching;
  sched.reservation = *reservation;
  sched.prefix_caching = config.prefix_caching;
  if (config.max_num_batched_tokens <= 0 || config.max_num_seqs <= 0 || config.max_waiting <= 0)
    return invalid("engine config: max_num_batched_tokens, max_num_seqs and max_waiting must be positive");
  if (config.fault_jitter_ms < 0)
    return invalid("engine config: fault_jitter_ms " + std::to_string(config.fault_jitter_ms) +
                   " is negative");
  sched.max_num_batched_tokens = config.max_num_batched_tokens;
  sched.max_num_seqs = config.max_num_seqs;

  auto kv_dtype = choose<kernels::dtype>("kv_dtype", config.kv_dtype,
                                         {{"f32", kernels::dtype::f32}, {"bf16", kernels::dtype::bf16}});
  if (!kv_dtype)
    return kv_dtype.error();
  auto weights = choose<std::optional<model::dtype>>(
    "weights", config.weights, {{"auto", std::nullopt}, {"f32", model::dtype::f32}, {"bf16", model::dtype::bf16}});
  if (!weights)
    return weights.error();
  auto activations = choose<std::optional<model::dtype>>(
    "activations", config.activations,
    {{"auto", std::nullopt}, {"f32", model::dtype::f32}, {"bf16", model::dtype::bf16}});
  if (!activations)
    return activations.error();
  auto dtypes = choose_precision(*weights, *activations, config.device.starts_with("cuda"),
                                 [&] { return model::checkpoint_matrix_dtype(config.model_dir); });
  if (!dtypes)
    return invalid(dtypes.error().message);
  auto loaded = model::load_model_folder(config.model_dir, dtypes->matrices);
  if (!loaded)
    return invalid(loaded.error().message);
  model::model_config mc = loaded->config;
  for (int64_t id : mc.eos_token_ids)
    sched.eos_tokens.push_back(static_cast<token_id>(id));

  model_runner_options options;
  options.device = config.device;
  options.kv_cache_bytes = config.kv_cache_bytes;
  options.swap_bytes = config.swap_bytes;
  options.kv_dtype = *kv_dtype;
  options.block_size = config.block_size != 0 ? config.block_size : default_block_size(config.device);
  options.max_num_batched_tokens = config.max_num_batched_tokens;
  options.max_num_seqs = config.max_num_seqs;
  options.num_threads = config.num_threads;
  options.activations = dtypes->activations;
  auto runner = model_runner::create(mc, std::move(loaded->weights), options);
  if (!runner)
    return invalid(config.model_dir + ": " + runner.error().message);

  request_context requests;
  requests.tokenizer = std::make_shared<const model::tokenizer>(std::move(loaded->tok));
  requests.limits.vocab_size = static_cast<int32_t>(mc.vocab_size);
  const auto context = static_cast<int32_t>(
    std::min<int64_t>(mc.max_position_embeddings, std::numeric_limits<int32_t>::max()));
  if (config.max_model_len < 0 || config.max_model_len > context)
    return invalid("engine config: max_model_len " + std::to_string(config.max_model_len) +
                   " is outside [0, " + std::to_string(context) + "], the model's context");
  requests.limits.max_context = config.max_model_len > 0 ? config.max_model_len : context;
  sched.max_model_len = requests.limits.max_context;
  return spawn_runtime(sys, std::move(runner.value()), std::move(requests), std::move(sched),
                       config.max_waiting, {config.fault_jitter_ms, config.fault_seed});
}

} // namespace kvactor
