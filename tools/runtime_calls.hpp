#pragma once
// runtime_calls: blocking calls on a runtime actor for the tools that drive
// one from plain threads (kvactor-stress, kvactor-bench).

#include "kvactor/kvactor.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace kvactor::tools {

// The message of an error from spawn_runtime (its context string), else CAF's rendering.
inline std::string error_text(caf::actor_system& sys, const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return sys.render(e);
}

// The runtime's figures; nullopt if it did not answer within 10 s.
inline std::optional<runtime_figures> figures_of(caf::actor_system& sys, runtime_actor runtime) {
  std::optional<runtime_figures> out;
  caf::scoped_actor self{sys};
  self->request(runtime, std::chrono::seconds(10), figures_atom::value)
    .receive([&](const runtime_figures& f) { out = f; }, [](const caf::error&) {});
  return out;
}

// Shuts the runtime down; false if it did not confirm within 60 s.
inline bool shutdown(caf::actor_system& sys, runtime_actor runtime) {
  bool ok = false;
  caf::scoped_actor self{sys};
  self->request(runtime, std::chrono::seconds(60), shutdown_atom::value)
    .receive([&](bool b) { ok = b; }, [](const caf::error&) {});
  return ok;
}

} // namespace kvactor::tools
