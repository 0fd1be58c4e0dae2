#pragma once
// runtime_calls: starting a runtime from a tool's options, and blocking calls
// on a runtime actor for the tools that drive one from plain threads
// (kvactor-stress, kvactor-bench).

#include "kvactor/kvactor.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace kvactor::tools {

// A runtime over the engine a tool read from its options, or the error of
// that reading or of spawn_runtime.
inline caf::expected<runtime_actor> spawn_runtime(caf::actor_system& sys,
                                                  const caf::expected<engine_config>& engine) {
  if (!engine)
    return engine.error();
  return kvactor::spawn_runtime(sys, *engine);
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
