#pragma once
// The spawn functions of kvactor's actors (used by spawn_runtime and tests).

#include "actors/core/scheduler_config.hpp"
#include "actors/runtime/interfaces.hpp"
#include "actors/runtime/jitter.hpp"
#include "actors/requests/request_state.hpp"
#include "actors/runner/step_runner.hpp"
#include "model/tokenizer/tokenizer.hpp"

#include <chrono>
#include <memory>

namespace kvactor {

// `delays` (jitter.hpp): how late each step's and swap's completion is
// reported; the block manager's refused swap-ins are late by its own stream.
executor_actor spawn_executor(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                              jitter_options delays = {});
block_manager_actor spawn_block_manager(caf::actor_system& sys, int32_t num_blocks,
                                        int32_t block_size, bool prefix_caching = true,
                                        jitter_options delays = {});
swap_actor spawn_swap(caf::actor_system& sys, int32_t num_host_blocks, block_manager_actor blocks,
                      executor_actor executor);

// What a request actor needs besides its request.
struct request_context {
  std::shared_ptr<const model::tokenizer> tokenizer;
  request_limits limits;
  // Output constraints' grammars (constraint_compiler.hpp); none: refused,
  // for the reason `no_constraints`.
  std::shared_ptr<constraint_compiler> constraints{};
  std::string no_constraints{"this runtime compiles no output constraints"};
};

struct scheduler_parts {
  scheduler_config config;
  int32_t num_device_blocks = 0;
  int32_t num_host_blocks = 0;
  int32_t block_size = cuda_block_size;
  int32_t max_waiting = default_max_waiting;
  block_manager_actor blocks;
  swap_actor swap;
  executor_actor executor;
};

scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_parts parts);

request_actor spawn_request(caf::actor_system& sys, request_id id, generate_request req,
                            sink_actor sink, scheduler_actor scheduler,
                            const request_context& context);

// The runtime actor's: the actors behind it and what it hands request actors.
struct runtime_parts {
  scheduler_actor scheduler;
  block_manager_actor blocks;
  swap_actor swap;
  int32_t block_size = cuda_block_size;
  request_context requests;
};

runtime_actor spawn_runtime_actor(caf::actor_system& sys, runtime_parts parts);

// The runtime's actors over a runner: executor, block manager, swap actor,
// scheduler and the runtime actor in front (kvactor::spawn_runtime makes the
// runner from an engine_config, then calls this; tests pass runners of
// their own).
runtime_actor spawn_actors(caf::actor_system& sys, std::shared_ptr<step_runner> runner,
                           request_context requests, scheduler_config config, int32_t max_waiting,
                           jitter_options delays = {});

// Sends at once, or `delay` later (a jitter fault).
template <class Dest, class... Ts>
void send_after(std::chrono::milliseconds delay, const Dest& dest, Ts&&... xs) {
  if (delay.count() == 0)
    caf::anon_send(dest, std::forward<Ts>(xs)...);
  else
    caf::delayed_anon_send(dest, delay, std::forward<Ts>(xs)...);
}

} // namespace kvactor
