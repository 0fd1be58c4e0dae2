// kvactor-serve: the runtime behind the TCP line protocol and, when given a
// port, the OpenAI-compatible HTTP front.
//
//   kvactor-serve [--host=127.0.0.1] [--port=7878] [--http-port=0] [--served-model-name=NAME]
//                 [--model=DIR] [--device=cpu|cuda]
//                 [--kv-cache-mib=256] [--swap-mib=256] [--block-size=0]
//                 [--max-batched-tokens=512] [--max-seqs=64] [--max-waiting=1024]
//                 [--preemption=swap|recompute] [--threads=0] [--max-model-len=0]
//                 [--batching=continuous|static|padded] [--kv-reservation=paged|contiguous]
//                 [--no-prefix-caching] [--weights=auto|f32|bf16] [--activations=f32|bf16]
//                 [--kv-dtype=f32|bf16]
// Options come through CAF's configuration (also caf-application.ini).
// Without --model it serves the default tiny model, written on first run.
// SIGINT or SIGTERM: live requests end as aborted, then the server exits.

#include "model/tiny/tiny_model.hpp"
#include "net/http_session.hpp"
#include "net/session.hpp"
#include "tools/runtime_calls.hpp"

#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <filesystem>
#include <iostream>

namespace {

struct serve_config : caf::actor_system_config {
  std::string host = "127.0.0.1";
  int32_t port = 7878;
  int32_t http_port = 0;
  std::string served_model_name;
  std::string model;
  std::string device = "cpu";
  int64_t kv_cache_mib = kvactor::default_kv_cache_bytes >> 20;
  int64_t swap_mib = kvactor::default_swap_bytes >> 20;
  int32_t block_size = 0;
  int32_t max_batched_tokens = kvactor::default_max_num_batched_tokens;
  int32_t max_seqs = kvactor::default_max_num_seqs;
  int32_t max_waiting = kvactor::default_max_waiting;
  std::string preemption = "swap";
  int32_t threads = 0;
  int32_t max_model_len = 0;
  std::string batching = "continuous";
  std::string kv_reservation = "paged";
  bool no_prefix_caching = false;
  std::string weights = "auto";
  std::string activations = "f32";
  std::string kv_dtype = "f32";
  int32_t fault_jitter_ms = 0;

  serve_config() {
    kvactor::add_message_types(*this);
    kvactor::use_serving_scheduler(*this);
    kvactor::net::add_message_types(*this);
    opt_group{custom_options_, "global"}
      .add(host, "host", "address to listen on")
      .add(port, "port", "TCP port of the line protocol (0: any free one)")
      .add(http_port, "http-port", "TCP port of the OpenAI-compatible HTTP front (0: off)")
      .add(served_model_name, "served-model-name",
           "the model's name in the HTTP API (default: the model folder's name)")
      .add(model, "model", "Hugging Face model folder (default: the tiny model)")
      .add(device, "device", "cpu, cuda or cuda:N")
      .add(kv_cache_mib, "kv-cache-mib", "device KV cache budget in MiB")
      .add(swap_mib, "swap-mib", "pinned host memory for swapped-out sequences, MiB")
      .add(block_size, "block-size", "tokens per KV block (0: the device's default, 8 on the CPU)")
      .add(max_batched_tokens, "max-batched-tokens", "tokens per step (chunked prefill budget)")
      .add(max_seqs, "max-seqs", "sequences per step")
      .add(max_waiting, "max-waiting", "waiting requests before new ones are refused")
      .add(preemption, "preemption", "swap or recompute")
      .add(threads, "threads", "CPU device threads (0: all cores)")
      .add(max_model_len, "max-model-len", "longest prompt + output (0: the model's context)")
      .add(batching, "batching",
           "continuous, static (a batch runs to its end) or padded (static, ended rows "
           "compute on)")
      .add(kv_reservation, "kv-reservation",
           "paged, or contiguous (max-model-len slots per request from admission)")
      .add(no_prefix_caching, "no-prefix-caching", "never reuse KV blocks by content")
      .add(weights, "weights",
           "matrices in memory: f32, bf16, or auto (bf16 for a bf16 checkpoint, else f32)")
      .add(activations, "activations",
           "the products' input rows: f32 (exact), or bf16 (rounded to bf16, on AMX or "
           "AVX512_BF16; lossy, faster for many rows)")
      .add(kv_dtype, "kv-dtype",
           "KV cache elements: f32, or bf16 (CPU: twice the blocks per MiB, K/V rounded to bf16)")
      .add(fault_jitter_ms, "fault-jitter-ms",
           "testing fault: report step and swap completions up to N ms late (0: off)");
  }
};

// The default model: the tiny model, written once under ~/.cache/kvactor.
std::string default_model() {
  const char* home = std::getenv("XDG_CACHE_HOME");
  std::filesystem::path base = home ? home : std::string(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") + "/.cache";
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

using kvactor::tools::error_text;

// The last component of a folder's path ("tiny" for "models/tiny/").
std::string folder_name(const std::string& dir) {
  auto p = std::filesystem::absolute(dir).lexically_normal();
  return (p.has_filename() ? p : p.parent_path()).filename().string();
}

int serve(caf::actor_system& sys, const serve_config& cfg) {
  if (cfg.port < 0 || cfg.port > 65535 || cfg.http_port < 0 || cfg.http_port > 65535) {
    std::cerr << "kvactor-serve: --port and --http-port must be in [0, 65535]\n";
    return 2;
  }
  kvactor::engine_config engine;
  engine.model_dir = cfg.model.empty() ? default_model() : cfg.model;
  if (engine.model_dir.empty())
    return 1;
  engine.device = cfg.device;
  engine.kv_cache_bytes = cfg.kv_cache_mib << 20;
  engine.swap_bytes = cfg.swap_mib << 20;
  engine.block_size = cfg.block_size;
  engine.max_num_batched_tokens = cfg.max_batched_tokens;
  engine.max_num_seqs = cfg.max_seqs;
  engine.max_waiting = cfg.max_waiting;
  engine.preemption = cfg.preemption;
  engine.num_threads = cfg.threads;
  engine.max_model_len = cfg.max_model_len;
  engine.batching = cfg.batching;
  engine.kv_reservation = cfg.kv_reservation;
  engine.prefix_caching = !cfg.no_prefix_caching;
  engine.weights = cfg.weights;
  engine.activations = cfg.activations;
  engine.kv_dtype = cfg.kv_dtype;
  engine.fault_jitter_ms = cfg.fault_jitter_ms;
  auto runtime = kvactor::spawn_runtime(sys, engine);
  if (!runtime) {
    std::cerr << "kvactor-serve: " << error_text(sys, runtime.error()) << "\n";
    return 1;
  }

  kvactor::net::server server(kvactor::net::line_protocol(sys, *runtime));
  auto front = std::make_shared<kvactor::net::http_front>(
    sys, *runtime,
    cfg.served_model_name.empty() ? folder_name(engine.model_dir) : cfg.served_model_name);
  if (cfg.http_port > 0) {
    auto chat = kvactor::model::chat_template::load(engine.model_dir);
    if (!chat) {
      std::cerr << "kvactor-serve: " << chat.error().message << "\n";
      caf::anon_send_exit(*runtime, caf::exit_reason::user_shutdown);
      return 1;
    }
    front->chat = *chat;
  }
  std::optional<kvactor::net::server> http;
  auto bound = server.listen(cfg.host, static_cast<uint16_t>(cfg.port));
  std::variant<uint16_t, std::string> http_bound = uint16_t{0};
  if (cfg.http_port > 0 && std::holds_alternative<uint16_t>(bound))
    http_bound = http.emplace(kvactor::net::http_protocol(front))
                   .listen(cfg.host, static_cast<uint16_t>(cfg.http_port));
  for (const auto* b : {&bound, &http_bound})
    if (auto* err = std::get_if<std::string>(b)) {
      std::cerr << "kvactor-serve: " << *err << "\n";
      caf::anon_send_exit(*runtime, caf::exit_reason::user_shutdown);
      return 1;
    }
  std::cout << "kvactor listening on " << cfg.host << ":" << std::get<uint16_t>(bound) << std::endl;
  if (http)
    std::cout << "kvactor HTTP on " << cfg.host << ":" << std::get<uint16_t>(http_bound)
              << ", model '" << front->model_name << "', chat template "
              << kvactor::model::to_string(front->chat.format()) << std::endl;

  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code&, int) {});
  signals_io.run();

  std::cerr << "kvactor-serve: shutting down\n";
  server.stop_accepting();
  if (http) {
    http->stop_accepting();
    front->draining = true;
  }
  caf::scoped_actor self{sys};
  self->request(*runtime, caf::infinite, kvactor::shutdown_atom::value)
    .receive([](bool) {}, [&](const caf::error& e) { std::cerr << sys.render(e) << "\n"; });
  server.stop();
  if (http)
    http->stop();
  return 0;
}

} // namespace

// NOTE: not CAF_MAIN: CAF 0.17's exec_main drops the exit code.
int main(int argc, char** argv) {
  serve_config cfg;
  if (auto err = cfg.parse(argc, argv, "caf-application.ini")) {
    std::cerr << "kvactor-serve: " << caf::actor_system_config::render(err) << "\n";
    return 2;
  }
  if (cfg.cli_helptext_printed)
    return 0;
  caf::actor_system sys{cfg};
  return serve(sys, cfg);
}
