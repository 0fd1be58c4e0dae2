#pragma once
// cluster_run: the run under faults of --mode=cluster — `--workers`
// kvactor-serve worker processes (the binary --serve names), a front in this
// process behind a line-protocol server, and the TCP driver. Once
// --kill-at of the requests have ended, the first worker is killed (SIGKILL)
// and started again on its port; its unfinished requests end with
// worker_lost (terminal errors, not missing), and it must rejoin.

#include "tools/stress/runs.hpp"

namespace kvactor::stress {

std::variant<run_outcome, std::string>
run_cluster(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
            const std::vector<stress_request>& workload, const std::vector<request_faults>& plan);

} // namespace kvactor::stress
