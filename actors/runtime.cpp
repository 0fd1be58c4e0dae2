// kvactor::spawn_runtime from an engine configuration: loads the model
// folder, makes the device and its KV pools (model_runner), and spawns the
// actors over them.

#include "actors/actors.hpp"
#include "actors/model_runner.hpp"
#include "kvactor/kvactor.hpp"
#include "model/model_folder.hpp"

#include <limits>

namespace kvactor {

namespace {

caf::error invalid(std::string message) {
  return caf::make_error(caf::sec::invalid_argument, std::move(message));
}

} // namespace

caf::expected<runtime_actor> spawn_runtime(caf::actor_system& sys, const engine_config& config) {
  scheduler_config sched;
  if (config.preemption == "swap")
    sched.preemption = preemption_mode::swap;
  else if (config.preemption == "recompute")
    sched.preemption = preemption_mode::recompute;
  else
    return invalid("engine config: preemption '" + config.preemption + "' is neither swap nor recompute");
  if (config.max_num_batched_tokens <= 0 || config.max_num_seqs <= 0 || config.max_waiting <= 0)
    return invalid("engine config: max_num_batched_tokens, max_num_seqs and max_waiting must be positive");
  sched.max_num_batched_tokens = config.max_num_batched_tokens;
  sched.max_num_seqs = config.max_num_seqs;

  // NOTE: fp32 matrices: the CPU forward pass computes in fp32 (bf16 weights
  // widen exactly); see model/forward/cpu_transformer.hpp.
  auto loaded = model::load_model_folder(config.model_dir, model::dtype::f32);
  if (!loaded)
    return invalid(loaded.error().message);
  model::model_config mc = loaded->config;
  for (int64_t id : mc.eos_token_ids)
    sched.eos_tokens.push_back(static_cast<token_id>(id));

  model_runner_options options;
  options.device = config.device;
  options.kv_cache_bytes = config.kv_cache_bytes;
  options.swap_bytes = config.swap_bytes;
  options.block_size = config.block_size;
  options.max_num_batched_tokens = config.max_num_batched_tokens;
  options.max_num_seqs = config.max_num_seqs;
  options.num_threads = config.num_threads;
  auto runner = model_runner::create(mc, std::move(loaded->weights), options);
  if (!runner)
    return invalid(config.model_dir + ": " + runner.error().message);

  request_context requests;
  requests.tokenizer = std::make_shared<const model::tokenizer>(std::move(loaded->tok));
  requests.limits.vocab_size = static_cast<int32_t>(mc.vocab_size);
  requests.limits.max_context = static_cast<int32_t>(
    std::min<int64_t>(mc.max_position_embeddings, std::numeric_limits<int32_t>::max()));
  return spawn_runtime(sys, std::move(runner.value()), std::move(requests), std::move(sched),
                       config.max_waiting);
}

} // namespace kvactor
