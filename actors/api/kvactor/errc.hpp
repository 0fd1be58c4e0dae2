#pragma once
// kvactor's error codes (errors.hpp: their names and caf::errors); the
// bookkeeping core includes this header, it needs no CAF.

#include <cstdint>

namespace kvactor {

// NOTE: the values cross the cluster's wire: a new code goes last.
enum class errc : uint8_t {
  none = 0,
  // A request refused at admission.
  invalid_field,   // a field outside its range, or an unusable prompt
  prompt_too_long, // the prompt and max_tokens do not fit the context
  overloaded,      // max_waiting requests wait already (a front: or no worker is live)
  // A request that ended without its result.
  worker_lost, // a front lost the worker that served it
  // spawn_runtime.
  invalid_config,  // an engine_config field outside its choices or range
  bad_model,       // the model folder cannot be loaded
  device_unusable, // the device cannot be made, or cannot allocate the KV pools or run the
                   // model; or it faulted while serving: every request then ends with it
                   // and every new one is refused with it
  // A cluster worker (cluster/worker_actor.hpp: publish_worker).
  cannot_publish, // the worker cannot listen on its address
  // A request that ended without its result: the model's logits for its
  // next token held no finite number to draw from (NaN, or infinite: corrupt
  // weights, or arithmetic that overflowed).
  non_finite_logits,
};

} // namespace kvactor
