#include "tools/stress/cluster_run.hpp"

#include "cluster/front_actor.hpp"
#include "net/session.hpp"
#include "tools/runtime_calls.hpp"
#include "tools/stress/server_stats.hpp"
#include "tools/stress/tcp_driver.hpp"
#include "tools/stress/worker_process.hpp"

#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

namespace kvactor::stress {

namespace {

using namespace std::chrono_literals;

// The worker processes' options: the run under faults' engine.
std::vector<std::string> worker_args(const stress_config& cfg, const std::string& model_dir) {
  auto mib = [](int64_t kib) { return std::to_string(std::max<int64_t>(1, (kib + 1023) / 1024)); };
  return {"--model=" + model_dir,
          "--kv-cache-mib=" + mib(cfg.kv_cache_kib),
          "--swap-mib=" + mib(cfg.swap_kib),
          "--block-size=" + std::to_string(cfg.block_size),
          "--max-seqs=" + std::to_string(cfg.max_seqs),
          "--max-batched-tokens=" + std::to_string(cfg.max_batched_tokens),
          "--preemption=" + cfg.preemption,
          "--activations=" + cfg.activations,
          "--kv-dtype=" + cfg.kv_dtype,
          "--threads=" + std::to_string(cfg.threads),
          "--fault-jitter-ms=" + std::to_string(cfg.jitter_ms),
          "--scheduler.max-threads=2"};
}

// Waits until the front has `n` live workers (30 s); false if it never does.
bool wait_live(caf::actor_system& sys, const runtime_actor& front, size_t n) {
  for (int i = 0; i < 300; ++i) {
    if (auto f = tools::figures_of(sys, front)) {
      size_t live = 0;
      for (const auto& w : f->workers)
        live += w.state == "live" ? 1 : 0;
      if (live == n)
        return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

} // namespace

std::variant<run_outcome, std::string>
run_cluster(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
            const std::vector<stress_request>& workload, const std::vector<request_faults>& plan) {
  const auto args = worker_args(cfg, model_dir);
  std::vector<worker_process> workers;
  for (int32_t i = 0; i < std::max(1, cfg.workers); ++i) {
    auto w = worker_process::start(cfg.serve, args, 0);
    if (auto* err = std::get_if<std::string>(&w))
      return "worker " + std::to_string(i + 1) + ": " + *err;
    workers.push_back(std::move(std::get<worker_process>(w)));
  }
  cluster::front_options options;
  for (const auto& w : workers)
    options.workers.push_back({"127.0.0.1", w.port()});
  options.resubmit = cfg.resubmit_lost;
  if (!cfg.quiet)
    options.log = [](const std::string& line) {
      std::cerr << "kvactor-stress: front: " << line << std::endl;
    };
  const runtime_actor front = cluster::spawn_front(sys, std::move(options));
  net::server line(net::line_protocol(sys, front));
  auto bound = line.listen(cfg.host, 0);
  if (auto* err = std::get_if<std::string>(&bound)) {
    tools::shutdown(sys, front);
    return "server: " + *err;
  }
  if (!wait_live(sys, front, workers.size())) {
    tools::shutdown(sys, front);
    return "the front never had its " + std::to_string(workers.size()) + " workers live";
  }

  auto book = std::make_shared<record_book>(choices_of(workload));
  run_outcome out;
  std::atomic<bool> stop_killer{false};
  std::string killer_note, killer_error;
  // Kills the first worker once kill_at of the requests have ended, and
  // starts it again on its port.
  std::thread killer([&] {
    const auto at = static_cast<int64_t>(cfg.kill_at * static_cast<double>(book->num_records()));
    while (!stop_killer && book->num_resolved() < at)
      std::this_thread::sleep_for(2ms);
    if (stop_killer)
      return;
    const auto port = workers[0].port();
    const int64_t resolved = book->num_resolved();
    workers[0].kill();
    auto again = worker_process::start(cfg.serve, args, port);
    if (auto* err = std::get_if<std::string>(&again)) {
      killer_error = "restarting worker 1: " + *err;
      return;
    }
    workers[0] = std::move(std::get<worker_process>(again));
    killer_note = "worker 1 (port " + std::to_string(port) + ") killed after " +
                  std::to_string(resolved) + " requests had ended, and restarted";
  });
  std::optional<std::variant<tcp_outcome, std::string>> tcp;
  {
    progress bar(*book, static_cast<int64_t>(book->num_records()), "stress", !cfg.quiet);
    tcp_options t;
    t.host = cfg.host;
    t.port = line.port();
    t.num_connections = cfg.connections;
    t.timeout_s = cfg.timeout_s;
    t.stall_s = cfg.stall_s;
    tcp = drive_tcp(workload, plan, t, *book);
  }
  stop_killer = true;
  killer.join();
  std::optional<std::string> failed;
  if (!killer_error.empty())
    failed = killer_error;
  else if (killer_note.empty())
    failed =
      "the run ended before a worker was killed (--kill-at " + std::to_string(cfg.kill_at) + ")";
  else if (!wait_live(sys, front, workers.size()))
    failed = "the restarted worker never rejoined the front";
  if (auto* err = std::get_if<std::string>(&*tcp)) {
    failed = *err;
  } else {
    const auto& r = std::get<tcp_outcome>(*tcp);
    // NOTE: the end state after the rejoin: both workers' pools idle.
    out.end = stats_when_idle(cfg.host, line.port());
    out.notes.push_back(killer_note);
    out.notes.push_back("malformed lines " + std::to_string(r.num_malformed_sent) + " answered " +
                        std::to_string(r.num_malformed_answered) + ", dropped connections " +
                        std::to_string(r.num_disconnects));
  }
  int64_t lost = 0;
  out.records = book->records();
  for (const auto& r : out.records)
    lost += r.error_code == "worker_lost" ? 1 : 0;
  out.notes.push_back("requests ended by worker_lost " + std::to_string(lost));
  if (cfg.resubmit_lost) {
    int64_t resubmitted = 0;
    if (auto f = tools::figures_of(sys, front))
      for (const auto& w : f->workers)
        resubmitted += w.requests_resubmitted;
    out.notes.push_back("requests started again on the other worker " +
                        std::to_string(resubmitted));
  }
  line.stop_accepting();
  tools::shutdown(sys, front);
  line.stop();
  for (auto& w : workers)
    if (w.stop() != 0 && !failed)
      failed = "a worker did not stop cleanly";
  if (failed)
    return *failed;
  return out;
}

} // namespace kvactor::stress
