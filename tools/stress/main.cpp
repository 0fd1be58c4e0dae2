// kvactor-stress: drives a kvactor runtime with a seeded workload and
// injected faults, then checks that nothing was lost, duplicated, mixed up
// or leaked. Exit status 0 only if every check holds; the last line is
//   requests N choices N ok N aborted N errors N mismatches 0 leaked_blocks 0 duplicates 0
//   missing 0
//
//   kvactor-stress [--mode=in-process|tcp|http|cluster] [--requests=2000] [--seed=1] [--rate=0]
//                  [--cancel-fraction=0.1] [--preempt-every=K] [--disconnect-fraction=F]
//                  [--malformed-fraction=F] [--choices-fraction=0.1] [--connections=4]
//                  [--host=H --port=P]
//                  [--model=DIR] [--kv-cache-kib=1024] [--swap-kib=1024] [--jitter-ms=MAX]
//                  [--stall-s=60] [--quiet] [--workers=2 --kill-at=0.3 --serve=PATH] ...
// (--help lists every option.)

#include "tools/command_line.hpp"
#include "tools/stress/checker.hpp"
#include "tools/stress/runs.hpp"
#include "tools/stress/small_model.hpp"

#include <chrono>
#include <iostream>

namespace {

using namespace kvactor::stress;

int stress(caf::actor_system& sys, const stress_config& cfg) {
  if (cfg.mode != "in-process" && cfg.mode != "tcp" && cfg.mode != "http" &&
      cfg.mode != "cluster") {
    std::cerr << "kvactor-stress: --mode must be in-process, tcp, http or cluster\n";
    return 2;
  }
  if (cfg.mode == "cluster" && (cfg.workers < 1 || !(cfg.kill_at >= 0 && cfg.kill_at < 1))) {
    std::cerr << "kvactor-stress: --workers must be >= 1 and --kill-at in [0, 1)\n";
    return 2;
  }
  if (cfg.mode == "http" && cfg.port != 0) {
    std::cerr << "kvactor-stress: --mode=http starts its servers in this process (no --port)\n";
    return 2;
  }
  if (cfg.requests < 0 || cfg.port < 0 || cfg.port > 65535 || cfg.jitter_ms < 0) {
    std::cerr
      << "kvactor-stress: --requests and --jitter-ms must be >= 0 and --port in [0, 65535]\n";
    return 2;
  }
  if (auto modes = engine_of(cfg, cfg.model, false); !modes) { // before any model is written
    std::cerr << "kvactor-stress: " << sys.render(modes.error()) << "\n";
    return 2;
  }
  std::optional<small_model> generated;
  std::string model_dir = cfg.model;
  if (model_dir.empty()) {
    auto written = small_model::write(static_cast<uint64_t>(cfg.seed));
    if (auto* err = std::get_if<std::string>(&written)) {
      std::cerr << "kvactor-stress: " << *err << "\n";
      return 1;
    }
    generated.emplace(std::move(std::get<small_model>(written)));
    model_dir = generated->dir().string();
  }

  workload_options w;
  w.num_requests = cfg.requests;
  w.seed = static_cast<uint64_t>(cfg.seed);
  w.rate = cfg.rate;
  w.num_connections = cfg.connections;
  w.choices_fraction = cfg.choices_fraction;
  w.vocab_size = small_model::vocab_size; // NOTE: a given model must have at least 512 tokens
  const auto workload = make_workload(w);
  fault_options f;
  f.seed = static_cast<uint64_t>(cfg.seed);
  f.cancel_fraction = cfg.cancel_fraction;
  f.preempt_every = cfg.preempt_every;
  f.disconnect_fraction = cfg.mode != "in-process" ? cfg.disconnect_fraction : 0;
  f.malformed_fraction = cfg.mode != "in-process" ? cfg.malformed_fraction : 0;
  f.jitter_ms = cfg.jitter_ms;
  const auto plan = make_fault_plan(workload, f);

  const auto t0 = std::chrono::steady_clock::now();
  auto reference = run_reference(sys, cfg, model_dir, workload);
  if (auto* err = std::get_if<std::string>(&reference)) {
    std::cerr << "kvactor-stress: " << *err << "\n";
    return 1;
  }
  const auto t1 = std::chrono::steady_clock::now();
  auto run = run_under_faults(sys, cfg, model_dir, workload, plan);
  if (auto* err = std::get_if<std::string>(&run)) {
    std::cerr << "kvactor-stress: " << *err << "\n";
    return 1;
  }
  const auto t2 = std::chrono::steady_clock::now();
  const auto& outcome = std::get<run_outcome>(run);
  const auto& ref = std::get<reference_run>(reference);
  auto result = check_run(outcome.records, ref.outputs, outcome.end);
  // NOTE: the undisturbed run must hold the same invariants; its failures
  // come first and fail the run.
  for (auto it = ref.check.failures.rbegin(); it != ref.check.failures.rend(); ++it)
    result.failures.insert(result.failures.begin(), "reference run: " + *it);
  result.num_leaked_blocks += ref.check.num_leaked_blocks;
  result.num_duplicates += ref.check.num_duplicates;
  result.num_missing += ref.check.num_missing;

  int64_t num_tokens = 0;
  for (const auto& r : outcome.records)
    num_tokens += static_cast<int64_t>(r.tokens.size());
  const double run_s = std::chrono::duration<double>(t2 - t1).count();
  std::cout << "kvactor-stress: mode " << cfg.mode << ", reference "
            << std::chrono::duration<double>(t1 - t0).count() << " s, run " << run_s << " s, "
            << num_tokens << " tokens (" << (run_s > 0 ? num_tokens / run_s : 0.0)
            << " tokens/s)\n";
  for (const auto& note : outcome.notes)
    std::cout << "kvactor-stress: " << note << "\n";
  std::cout << "kvactor-stress: cancelled " << result.num_cancelled << ", disconnected "
            << result.num_disconnected << " (counted as aborted)\n";
  constexpr size_t max_shown = 20;
  for (size_t i = 0; i < result.failures.size() && i < max_shown; ++i)
    std::cout << "FAIL: " << result.failures[i] << "\n";
  if (result.failures.size() > max_shown)
    std::cout << "FAIL: ... and " << result.failures.size() - max_shown << " more\n";
  std::cout << result.summary() << std::endl;
  return result.passed() ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  stress_config cfg;
  if (!kvactor::tools::parse_command_line(cfg, argc, argv, "kvactor-stress"))
    return 2;
  if (cfg.cli_helptext_printed)
    return 0;
  int rc = 0;
  {
    caf::actor_system sys{cfg};
    rc = stress(sys, cfg);
  }
  return rc;
}
