#include "tools/serve_modes.hpp"

#include "cluster/front_actor.hpp"
#include "cluster/worker_actor.hpp"
#include "model/config.hpp"
#include "model/model_folder.hpp"
#include "model/shared_tokenizer.hpp"
#include "model/sampling_defaults.hpp"
#include "base/resident_memory.hpp"
#include "model/tiny/tiny_model.hpp"
#include "net/http_session.hpp"
#include "net/session.hpp"
#include "tools/runtime_calls.hpp"

#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace kvactor::tools {

namespace {

// The default model: the tiny model, written once under ~/.cache/kvactor.
std::string default_model() {
  const char* home = std::getenv("XDG_CACHE_HOME");
  std::filesystem::path base =
    home ? home : std::string(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") + "/.cache";
  auto dir = base / "kvactor" / "tiny";
  if (!std::filesystem::exists(dir / "model.safetensors")) {
    std::cerr << "kvactor-serve: writing the default tiny model to " << dir << "\n";
    if (auto ok = kvactor::model::tiny::write_model(dir, {}); !ok) {
      std::cerr << "kvactor-serve: " << ok.error().message << "\n";
      return {};
    }
  }
  return dir.string();
}

// The bytes of a model's weight files: a GGUF file, or a folder's
// safetensors files.
int64_t weight_file_bytes(const std::filesystem::path& model) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(model, ec))
    return static_cast<int64_t>(std::filesystem::file_size(model, ec));
  int64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(model, ec))
    if (entry.path().extension() == ".safetensors")
      total += static_cast<int64_t>(entry.file_size(ec));
  return total;
}

// "kvactor memory after load: 902 MiB resident, 70 MiB of it file pages;
// weight files 644 MiB" (nothing where /proc is not there).
void report_memory(const std::filesystem::path& model) {
  const std::optional<resident_memory> m = current_resident_memory();
  if (!m) return;
  const auto mb = [](int64_t bytes) { return std::to_string(bytes / (1 << 20)) + " MiB"; };
  std::cout << "kvactor memory after load: " << mb(m->bytes) << " resident, " << mb(m->file_bytes)
            << " of it file pages; weight files " << mb(weight_file_bytes(model)) << std::endl;
}

std::string model_dir_of(const serve_config& cfg) {
  return cfg.model.empty() ? default_model() : cfg.model;
}

// The last component of a folder's path ("tiny" for "models/tiny/").
std::string folder_name(const std::string& dir) {
  auto p = std::filesystem::absolute(dir).lexically_normal();
  return (p.has_filename() ? p : p.parent_path()).filename().string();
}

caf::expected<engine_config> engine_of(const serve_config& cfg, std::string model_dir) {
  engine_config engine;
  for (caf::error err : {parse_option("--preemption", cfg.preemption, engine.preemption),
                         parse_option("--batching", cfg.batching, engine.batching),
                         parse_option("--kv-reservation", cfg.kv_reservation, engine.reservation),
                         parse_option("--weights", cfg.weights, engine.weights),
                         parse_option("--activations", cfg.activations, engine.activations),
                         parse_option("--kv-dtype", cfg.kv_dtype, engine.kv_dtype)})
    if (err)
      return err;
  engine.model_dir = std::move(model_dir);
  engine.device = cfg.device;
  engine.kv_cache_bytes = cfg.kv_cache_mib << 20;
  engine.gpu_memory_utilization = cfg.gpu_memory_utilization;
  engine.swap_bytes = cfg.swap_mib << 20;
  engine.block_size = cfg.block_size;
  engine.max_num_batched_tokens = cfg.max_batched_tokens;
  engine.max_num_seqs = cfg.max_seqs;
  engine.max_waiting = cfg.max_waiting;
  engine.num_threads = cfg.threads;
  engine.max_model_len = cfg.max_model_len;
  engine.prefix_caching = !cfg.no_prefix_caching;
  engine.cuda_graphs = !cfg.no_cuda_graphs;
  engine.fault_jitter_ms = cfg.fault_jitter_ms;
  return engine;
}

caf::expected<runtime_actor> start_runtime(caf::actor_system& sys, const serve_config& cfg,
                                           const std::string& model_dir) {
  auto runtime = tools::spawn_runtime(sys, engine_of(cfg, model_dir));
  if (!runtime)
    std::cerr << "kvactor-serve: " << sys.render(runtime.error()) << "\n";
  return runtime;
}

constexpr std::chrono::seconds shutdown_grace{10};

void wait_for_signal() {
  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code&, int) {});
  signals_io.run();
}

// The line protocol (and the HTTP front) over `runtime` until a signal.
int serve_clients(caf::actor_system& sys, const serve_config& cfg, runtime_actor runtime,
                  const std::string& model_dir) {
  if (cfg.port < 0 || cfg.port > 65535 || cfg.http_port < 0 || cfg.http_port > 65535) {
    std::cerr << "kvactor-serve: --port and --http-port must be in [0, 65535]\n";
    caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
    return 2;
  }
  // The model's generation_config.json: defaults for the sampling fields a
  // request leaves out, at both front doors (as vLLM applies them).
  auto sampling = model::load_sampling_defaults(model_dir);
  if (!sampling) {
    std::cerr << "kvactor-serve: " << sampling.error().message << "\n";
    caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
    return 1;
  }
  net::session_options line_options;
  line_options.sampling = *sampling;
  line_options.line_timeout = std::chrono::seconds(cfg.request_timeout_s);
  line_options.max_live_choices = std::max(1, cfg.max_waiting / 4);
  // Both front doors share one connection limit.
  auto limit = std::make_shared<net::connection_limit>(
    cfg.max_connections > 0 ? cfg.max_connections : net::default_max_connections());
  net::server server(net::line_protocol(sys, runtime, line_options), limit);
  net::http_options http_options;
  http_options.request_timeout = std::chrono::seconds(cfg.request_timeout_s);
  // NOTE: a connection's requests run one at a time: one connection holds at
  // most a quarter of the waiting queue.
  http_options.max_choices =
    static_cast<size_t>(std::clamp(cfg.max_waiting / 4, 1, std::max(1, cfg.max_request_choices)));
  auto front = std::make_shared<net::http_front>(
    sys, runtime, cfg.served_model_name.empty() ? folder_name(model_dir) : cfg.served_model_name,
    http_options);
  front->sampling = *sampling;
  if (cfg.http_port > 0) {
    auto chat = model::load_model_chat_template(model_dir, cfg.chat_template);
    if (!chat) {
      // NOTE: the model's template at fault (its text, or its key in
      // tokenizer_config.json or the GGUF file), not the file around it.
      const std::string& why = chat.error().message;
      const bool template_at_fault = why.find("chat template") != std::string::npos ||
                                     why.find("chat_template") != std::string::npos;
      std::cerr << "kvactor-serve: " << why
                << (cfg.chat_template.empty() && template_at_fault
                      ? " (--chat-template=FILE serves the model with another)"
                      : "")
                << "\n";
      caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
      return 1;
    }
    front->chat = *chat;
    // /tokenize and /detokenize: the runtime's tokenizer (or the front's
    // over workers), shared.
    auto tok = model::shared_tokenizer(model_dir);
    auto config = model::load_model_config(model_dir);
    if (!tok || !config) {
      std::cerr << "kvactor-serve: " << (tok ? config.error() : tok.error()).message << "\n";
      caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
      return 1;
    }
    front->tokenizer = *tok;
    front->max_model_len =
      cfg.max_model_len > 0 ? cfg.max_model_len : config->max_position_embeddings;
  }
  std::optional<net::server> http;
  auto bound = server.listen(cfg.host, static_cast<uint16_t>(cfg.port));
  std::variant<uint16_t, std::string> http_bound = uint16_t{0};
  if (cfg.http_port > 0 && std::holds_alternative<uint16_t>(bound))
    http_bound = http.emplace(net::http_protocol(front), limit)
                   .listen(cfg.host, static_cast<uint16_t>(cfg.http_port));
  for (const auto* b : {&bound, &http_bound})
    if (auto* err = std::get_if<std::string>(b)) {
      std::cerr << "kvactor-serve: " << *err << "\n";
      caf::anon_send_exit(runtime, caf::exit_reason::user_shutdown);
      return 1;
    }
  std::cout << "kvactor listening on " << cfg.host << ":" << std::get<uint16_t>(bound) << std::endl;
  report_memory(model_dir);
  if (!sampling->empty())
    std::cout << "kvactor sampling defaults from generation_config.json: "
              << model::to_string(*sampling) << std::endl;
  if (http)
    std::cout << "kvactor HTTP on " << cfg.host << ":" << std::get<uint16_t>(http_bound)
              << ", model '" << front->model_name << "', chat template: "
              << (front->chat.is_plain()         ? "none (plain)"
                  : cfg.chat_template.empty() ? "the model's, run by Jinja2"
                                              : cfg.chat_template + ", run by Jinja2")
              << std::endl;

  wait_for_signal();

  std::cerr << "kvactor-serve: shutting down\n";
  server.stop_accepting();
  if (http) {
    http->stop_accepting();
    front->draining = true;
  }
  // NOTE: bounded: whatever is queued, the process ends. Requests the
  // runtime has not ended by then are cut off with their connections, and
  // the process exits at once rather than wait for its actors.
  caf::scoped_actor self{sys};
  bool stopped = true;
  self->request(runtime, shutdown_grace, shutdown_atom::value)
    .receive([](bool) {},
             [&](const caf::error& e) {
               std::cerr << "kvactor-serve: the runtime did not stop in " << shutdown_grace.count()
                         << " s (" << sys.render(e) << "); exiting without it\n";
               stopped = false;
             });
  server.stop();
  if (http)
    http->stop();
  if (!stopped) {
    std::cout.flush();
    std::_Exit(1);
  }
  return 0;
}

// NOTE: CAF's node protocol has no authentication: without TLS a worker is
// reachable from its own machine only.
bool is_loopback(const std::string& host) {
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  return host == "localhost" || (!ec && address.is_loopback());
}

// Either none or all of the three TLS files, each readable.
bool tls_settings_ok(const serve_config& cfg) {
  const std::pair<const char*, const std::string*> files[] = {
    {"--openssl.certificate", &cfg.openssl_certificate},
    {"--openssl.key", &cfg.openssl_key},
    {"--openssl.cafile", &cfg.openssl_cafile}};
  int given = 0;
  for (const auto& [flag, path] : files)
    if (!path->empty()) {
      ++given;
      if (!std::filesystem::is_regular_file(*path)) {
        std::cerr << "kvactor-serve: " << flag << "=" << *path << ": no such file\n";
        return false;
      }
    }
  if (given != 0 && given != 3) {
    std::cerr << "kvactor-serve: TLS between nodes needs all of --openssl.certificate, "
                 "--openssl.key and --openssl.cafile\n";
    return false;
  }
  return true;
}

} // namespace

int serve_single(caf::actor_system& sys, const serve_config& cfg) {
  const std::string model_dir = model_dir_of(cfg);
  if (model_dir.empty())
    return 1;
  auto runtime = start_runtime(sys, cfg, model_dir);
  if (!runtime)
    return 1;
  return serve_clients(sys, cfg, *runtime, model_dir);
}

int serve_worker(caf::actor_system& sys, const serve_config& cfg) {
  if (cfg.worker_port > 65535) {
    std::cerr << "kvactor-serve: --worker-port must be in [0, 65535]\n";
    return 2;
  }
  if (!tls_settings_ok(cfg))
    return 2;
  if (!is_loopback(cfg.worker_bind) && !cfg.tls()) {
    std::cerr << "kvactor-serve: --worker-bind=" << cfg.worker_bind
              << ": a worker binds beyond loopback only with TLS (CAF's node protocol has no "
                 "authentication): give --openssl.certificate, --openssl.key and "
                 "--openssl.cafile\n";
    return 2;
  }
  const std::string model_dir = model_dir_of(cfg);
  if (model_dir.empty())
    return 1;
  auto runtime = start_runtime(sys, cfg, model_dir);
  if (!runtime)
    return 1;
  cluster::worker_hello hello;
  hello.protocol_version =
    cfg.worker_protocol_version != 0 ? cfg.worker_protocol_version : cluster::protocol_version;
  hello.block_size = cfg.block_size != 0 ? cfg.block_size : default_block_size(cfg.device);
  hello.model = folder_name(model_dir);
  auto worker = cluster::spawn_worker(sys, *runtime, hello);
  auto port = cluster::publish_worker(sys, worker, cfg.worker_bind,
                                      static_cast<uint16_t>(cfg.worker_port), cfg.tls());
  if (!port) {
    std::cerr << "kvactor-serve: " << sys.render(port.error()) << "\n";
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(*runtime, caf::exit_reason::user_shutdown);
    return 1;
  }
  std::cout << "kvactor worker on " << cfg.worker_bind << ":" << *port
            << (cfg.tls() ? " (TLS)" : "") << std::endl;

  wait_for_signal();

  std::cerr << "kvactor-serve: shutting down\n";
  shutdown(sys, *runtime);
  // NOTE: a published actor keeps the actor system from ending until it exits.
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  return 0;
}

int serve_front(caf::actor_system& sys, const serve_config& cfg) {
  auto workers = cluster::parse_worker_list(cfg.workers);
  if (!workers) {
    std::cerr << "kvactor-serve: " << workers.error().message << "\n";
    return 2;
  }
  if (!tls_settings_ok(cfg))
    return 2;
  const std::string model_dir = model_dir_of(cfg);
  if (model_dir.empty())
    return 1;
  // NOTE: the front tokenizes; the workers hold the weights (a folder's
  // tokenizer.json, or the tokenizer in a GGUF file's metadata), shared
  // with the HTTP front's /tokenize.
  auto tok = model::shared_tokenizer(model_dir);
  if (!tok) {
    std::cerr << "kvactor-serve: " << tok.error().message << "\n";
    return 1;
  }
  cluster::front_options options;
  options.workers = *workers;
  options.tokenizer = *tok;
  options.tls = cfg.tls();
  options.resubmit = cfg.resubmit_lost;
  options.log = [](const std::string& line) {
    std::cerr << "kvactor-serve: " << line << std::endl;
  };
  std::cout << "kvactor front for " << workers->size() << " worker"
            << (workers->size() == 1 ? "" : "s") << std::endl;
  return serve_clients(sys, cfg, cluster::spawn_front(sys, std::move(options)), model_dir);
}

} // namespace kvactor::tools
