#pragma once
// kvactor's error codes. A refused request's admission and a done_event that
// ends in error carry one (error_code); spawn_runtime's failures are
// caf::errors of category "kvactor", which add_message_types registers so
// that actor_system::render shows their code and message.
//
//   auto rt = kvactor::spawn_runtime(sys, engine);
//   if (!rt && kvactor::code_of(rt.error()) == kvactor::errc::bad_model) ...
//   std::cerr << sys.render(rt.error());  // "bad_model: /m/config.json: ..."

#include <caf/atom.hpp>
#include <caf/error.hpp>

#include <cstdint>
#include <string>

namespace kvactor {

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
};

// The code's name as the line protocol and the HTTP front spell it
// ("invalid_field"; "none" for none).
const char* to_string(errc code);

// The category of kvactor's caf::errors.
inline constexpr caf::atom_value error_category = caf::atom("kvactor");

// A caf::error of kvactor's category, with a message naming what is wrong.
caf::error make_error(errc code, std::string message);

// The code of one of kvactor's caf::errors; none for any other error.
errc code_of(const caf::error& e);

// The message of one of kvactor's caf::errors; CAF's rendering of any other.
std::string message_of(const caf::error& e);

} // namespace kvactor
