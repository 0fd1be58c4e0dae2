#pragma once
// runs: the two runs of kvactor-stress — the undisturbed reference (in
// process, faults off, a roomy KV budget) and the run under faults (in
// process or over TCP) — each over a runtime it spawns and shuts down.

#include "tools/stress/checker.hpp"
#include "tools/stress/fault_plan.hpp"
#include "tools/stress/stress_config.hpp"
#include "tools/stress/workload.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kvactor::stress {

using reference_outputs = std::vector<std::optional<std::vector<int32_t>>>;

struct run_outcome {
  std::vector<request_record> records;
  std::optional<end_state> end;
  std::vector<std::string> notes; // lines for the report (faults seen, figures)
};

// The engine of a run: the roomy one for the reference, or the configured
// one; an error names an option that names no mode.
caf::expected<engine_config> engine_of(const stress_config& cfg, const std::string& model_dir,
                                       bool roomy);

struct reference_run {
  reference_outputs outputs; // of the requests that ended normally
  check_result check;        // the reference run is checked as well (no faults)
};

// The undisturbed run, or an error message.
std::variant<reference_run, std::string>
run_reference(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
              const std::vector<stress_request>& workload);

std::variant<run_outcome, std::string>
run_under_faults(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
                 const std::vector<stress_request>& workload,
                 const std::vector<request_faults>& plan);

} // namespace kvactor::stress
