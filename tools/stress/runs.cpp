#include "tools/stress/runs.hpp"

#include "net/session.hpp"
#include "tools/runtime_calls.hpp"
#include "net/http_session.hpp"
#include "tools/stress/cluster_run.hpp"
#include "tools/stress/http_driver.hpp"
#include "tools/stress/in_process_driver.hpp"
#include "tools/stress/server_stats.hpp"
#include "tools/stress/tcp_driver.hpp"

namespace kvactor::stress {

using tools::shutdown;

caf::expected<engine_config> engine_of(const stress_config& cfg, const std::string& model_dir,
                                       bool roomy) {
  engine_config e;
  for (caf::error err : {parse_option("--preemption", cfg.preemption, e.preemption),
                         parse_option("--activations", cfg.activations, e.activations),
                         parse_option("--kv-dtype", cfg.kv_dtype, e.kv_dtype)})
    if (err)
      return err;
  e.model_dir = model_dir;
  e.kv_cache_bytes = roomy ? int64_t{256} << 20 : cfg.kv_cache_kib << 10;
  e.swap_bytes = roomy ? int64_t{64} << 20 : cfg.swap_kib << 10;
  e.block_size = cfg.block_size;
  e.max_num_seqs = cfg.max_seqs;
  e.max_num_batched_tokens = cfg.max_batched_tokens;
  // NOTE: the reference must see every request: nothing is refused as overloaded.
  e.max_waiting = roomy ? std::max(1, cfg.requests) : kvactor::default_max_waiting;
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
  auto runtime = tools::spawn_runtime(sys, engine_of(cfg, model_dir, true));
  if (!runtime)
    return "reference runtime: " + sys.render(runtime.error());
  std::vector<stress_request> at_once = workload;
  for (auto& r : at_once)
    r.arrival_s = 0;
  std::vector<request_faults> none(workload.size());
  auto shared_book = std::make_shared<record_book>(choices_of(workload));
  record_book& book = *shared_book;
  drive_options options;
  options.timeout_s = cfg.timeout_s;
  options.stall_s = cfg.stall_s;
  std::optional<end_state> end;
  {
    progress bar(book, static_cast<int64_t>(book.num_records()), "reference", !cfg.quiet);
    end = drive_in_process(sys, *runtime, at_once, none, options, shared_book, bar);
  }
  shutdown(sys, *runtime);
  reference_run out;
  auto records = book.records();
  out.outputs.resize(records.size());
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].num_dones == 1 && records[i].finish_reason != finish_reason::aborted)
      out.outputs[i] = records[i].done_tokens;
  out.check = check_run(records, {}, end);
  return out;
}

namespace {

// A server of this process on an ephemeral port, or an error message.
std::variant<std::unique_ptr<net::server>, std::string> listen_here(net::connection_factory make,
                                                                     const std::string& host) {
  auto server = std::make_unique<net::server>(std::move(make));
  auto bound = server->listen(host, 0);
  if (auto* err = std::get_if<std::string>(&bound))
    return "server: " + *err;
  return server;
}

} // namespace

std::variant<run_outcome, std::string>
run_under_faults(caf::actor_system& sys, const stress_config& cfg, const std::string& model_dir,
                 const std::vector<stress_request>& workload,
                 const std::vector<request_faults>& plan) {
  if (cfg.mode == "cluster")
    return run_cluster(sys, cfg, model_dir, workload, plan);
  auto shared_book = std::make_shared<record_book>(choices_of(workload));
  record_book& book = *shared_book;
  run_outcome out;
  const bool external = cfg.mode == "tcp" && cfg.port != 0;
  std::optional<runtime_actor> runtime;
  if (!external) {
    auto spawned = tools::spawn_runtime(sys, engine_of(cfg, model_dir, false));
    if (!spawned)
      return "runtime: " + sys.render(spawned.error());
    runtime = *spawned;
  }
  if (cfg.mode == "in-process") {
    drive_options options;
    options.preempt_every = cfg.preempt_every;
    options.timeout_s = cfg.timeout_s;
    options.stall_s = cfg.stall_s;
    progress bar(book, static_cast<int64_t>(book.num_records()), "stress", !cfg.quiet);
    out.end = drive_in_process(sys, *runtime, workload, plan, options, shared_book, bar);
    shutdown(sys, *runtime);
  } else {
    // Over a line-protocol server (this process's or the given one) and, for
    // http, the HTTP front too; the end state comes from the line protocol's
    // stats.
    std::unique_ptr<net::server> line, http;
    uint16_t line_port = static_cast<uint16_t>(cfg.port);
    std::optional<std::string> failed;
    if (!external) {
      auto started = listen_here(net::line_protocol(sys, *runtime), cfg.host);
      if (auto* err = std::get_if<std::string>(&started))
        failed = *err;
      else
        line = std::move(std::get<std::unique_ptr<net::server>>(started));
    }
    if (!failed && cfg.mode == "http") {
      auto front = std::make_shared<net::http_front>(sys, *runtime, "stress");
      auto started = listen_here(net::http_protocol(front), cfg.host);
      if (auto* err = std::get_if<std::string>(&started))
        failed = *err;
      else
        http = std::move(std::get<std::unique_ptr<net::server>>(started));
    }
    if (line)
      line_port = line->port();
    std::optional<std::variant<tcp_outcome, std::string>> tcp;
    std::optional<http_outcome> over_http;
    if (!failed) {
      progress bar(book, static_cast<int64_t>(book.num_records()), "stress", !cfg.quiet);
      if (http) {
        http_options options;
        options.host = cfg.host;
        options.port = http->port();
        options.timeout_s = cfg.timeout_s;
        options.stall_s = cfg.stall_s;
        over_http = drive_http(workload, plan, options, book);
      } else {
        tcp_options options;
        options.host = cfg.host;
        options.port = line_port;
        options.num_connections = cfg.connections;
        options.timeout_s = cfg.timeout_s;
        options.stall_s = cfg.stall_s;
        tcp = drive_tcp(workload, plan, options, book);
      }
    }
    if (over_http) {
      out.end = stats_when_idle(cfg.host, line_port);
      out.notes.push_back("malformed requests " + std::to_string(over_http->num_malformed_sent) +
                          " answered " + std::to_string(over_http->num_malformed_answered) +
                          ", connections closed to cancel or disconnect " +
                          std::to_string(over_http->num_closed));
    } else if (tcp) {
      if (auto* err = std::get_if<std::string>(&*tcp)) {
        failed = *err;
      } else {
        const auto& t = std::get<tcp_outcome>(*tcp);
        out.end = t.end;
        out.notes.push_back("malformed lines " + std::to_string(t.num_malformed_sent) +
                            " answered " + std::to_string(t.num_malformed_answered) +
                            ", dropped connections " + std::to_string(t.num_disconnects));
      }
    }
    for (auto* s : {line.get(), http.get()})
      if (s)
        s->stop_accepting();
    if (runtime)
      shutdown(sys, *runtime);
    for (auto* s : {line.get(), http.get()})
      if (s)
        s->stop();
    if (failed)
      return *failed;
  }
  out.records = book.records();
  if (out.end)
    out.notes.push_back("preemptions " + std::to_string(out.end->preemptions) +
                        " (swap-outs refused " + std::to_string(out.end->swap_outs_refused) +
                        "), cancels sent " + std::to_string(book.num_cancels()));
  return out;
}

} // namespace kvactor::stress
