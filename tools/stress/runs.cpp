#include "tools/stress/runs.hpp"

#include "net/session.hpp"
#include "tools/runtime_calls.hpp"
#include "tools/stress/in_process_driver.hpp"
#include "tools/stress/tcp_driver.hpp"

namespace kvactor::stress {

using tools::error_text;
using tools::shutdown;

engine_config engine_of(const stress_config& cfg, const std::string& model_dir, bool roomy) {
  engine_config e;
  e.model_dir = model_dir;
  e.kv_cache_bytes = roomy ? int64_t{256} << 20 : cfg.kv_cache_kib << 10;
  e.swap_bytes = roomy ? int64_t{64} << 20 : cfg.swap_kib << 10;
  e.block_size = cfg.block_size;
  e.max_num_seqs = cfg.max_seqs;
  e.max_num_batched_tokens = cfg.max_batched_tokens;
  // NOTE: the reference must see every request: nothing is refused as overloaded.
  e.max_waiting = roomy ? std::max(1, cfg.requests) : 1024;
  e.preemption = cfg.preemption;
  e.num_threads = cfg.threads;
  if (!roomy) { // the reference run is undisturbed
    e.fault_jitter_ms = cfg.jitter_ms;
    e.fault_seed = static_cast<uint64_t>(cfg.seed);
  }
  return e;
}

std::variant<reference_run, std::string>
run_reference(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
              const std::vector<stress_request>& workload) {
  auto runtime = spawn_runtime(sys, engine_of(cfg, model_dir, true));
  if (!runtime)
    return "reference runtime: " + error_text(sys, runtime.error());
  std::vector<stress_request> at_once = workload;
  for (auto& r : at_once)
    r.arrival_s = 0;
  std::vector<request_faults> none(workload.size());
  auto shared_book = std::make_shared<record_book>(workload.size());
  record_book& book = *shared_book;
  drive_options options;
  options.timeout_s = cfg.timeout_s;
  options.stall_s = cfg.stall_s;
  std::optional<end_state> end;
  {
    progress bar(book, static_cast<int64_t>(workload.size()), "reference", !cfg.quiet);
    end = drive_in_process(sys, *runtime, at_once, none, options, shared_book, bar);
  }
  shutdown(sys, *runtime);
  reference_run out;
  out.outputs.resize(workload.size());
  auto records = book.records();
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].num_dones == 1 && records[i].finish_reason != "aborted")
      out.outputs[i] = records[i].done_tokens;
  out.check = check_run(records, {}, end);
  return out;
}

std::variant<run_outcome, std::string>
run_under_faults(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
                 const std::vector<stress_request>& workload,
                 const std::vector<request_faults>& plan) {
  auto shared_book = std::make_shared<record_book>(workload.size());
  record_book& book = *shared_book;
  run_outcome out;
  const bool external = cfg.mode == "tcp" && cfg.port != 0;
  std::optional<runtime_actor> runtime;
  if (!external) {
    auto spawned = spawn_runtime(sys, engine_of(cfg, model_dir, false));
    if (!spawned)
      return "runtime: " + error_text(sys, spawned.error());
    runtime = *spawned;
  }
  if (cfg.mode == "in-process") {
    drive_options options;
    options.preempt_every = cfg.preempt_every;
    options.timeout_s = cfg.timeout_s;
    options.stall_s = cfg.stall_s;
    progress bar(book, static_cast<int64_t>(workload.size()), "stress", !cfg.quiet);
    out.end = drive_in_process(sys, *runtime, workload, plan, options, shared_book, bar);
  } else {
    tcp_options options;
    options.host = cfg.host;
    options.num_connections = cfg.connections;
    options.timeout_s = cfg.timeout_s;
    options.stall_s = cfg.stall_s;
    std::unique_ptr<net::server> server;
    if (external) {
      options.port = static_cast<uint16_t>(cfg.port);
    } else {
      server = std::make_unique<net::server>(net::line_protocol(sys, *runtime));
      auto bound = server->listen(cfg.host, 0);
      if (auto* err = std::get_if<std::string>(&bound)) {
        shutdown(sys, *runtime);
        return "server: " + *err;
      }
      options.port = std::get<uint16_t>(bound);
    }
    std::variant<tcp_outcome, std::string> driven;
    {
      progress bar(book, static_cast<int64_t>(workload.size()), "stress", !cfg.quiet);
      driven = drive_tcp(workload, plan, options, book);
    }
    if (server)
      server->stop_accepting();
    if (auto* err = std::get_if<std::string>(&driven)) {
      if (runtime)
        shutdown(sys, *runtime);
      return *err;
    }
    const auto& t = std::get<tcp_outcome>(driven);
    out.end = t.end;
    out.notes.push_back("malformed lines " + std::to_string(t.num_malformed_sent) + " answered " +
                        std::to_string(t.num_malformed_answered) + ", dropped connections " +
                        std::to_string(t.num_disconnects));
    if (runtime)
      shutdown(sys, *runtime);
    if (server)
      server->stop();
    runtime.reset();
  }
  if (runtime)
    shutdown(sys, *runtime);
  out.records = book.records();
  if (out.end)
    out.notes.push_back("preemptions " + std::to_string(out.end->preemptions) + ", cancels sent " +
                        std::to_string(book.num_cancels()));
  return out;
}

} // namespace kvactor::stress
