#pragma once
// kvactor's error codes (errc.hpp): their names, and their caf::errors. A
// refused request's admission and a done_event that ends in error carry one
// (error_code); spawn_runtime's failures are caf::errors of category
// "kvactor", which add_message_types registers so that actor_system::render
// shows their code and message.
//
//   auto rt = kvactor::spawn_runtime(sys, engine);
//   if (!rt && kvactor::code_of(rt.error()) == kvactor::errc::bad_model) ...
//   std::cerr << sys.render(rt.error());  // "bad_model: /m/config.json: ..."

#include "kvactor/errc.hpp"

#include <caf/atom.hpp>
#include <caf/error.hpp>

#include <string>

namespace kvactor {

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
