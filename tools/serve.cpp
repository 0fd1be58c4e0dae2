// kvactor-serve: the runtime behind the TCP line protocol and, when given a
// port, the OpenAI-compatible HTTP front; or one node of several (a worker,
// or a front that routes to workers).
//
//   kvactor-serve [--host=127.0.0.1] [--port=7878] [--http-port=0] [--served-model-name=NAME]
//                 [--model=DIR|FILE.gguf] [--chat-template=FILE] [--device=cpu|cuda]
//                 [--kv-cache-mib=0] [--gpu-memory-utilization=0.9] [--swap-mib=256]
//                 [--block-size=0]
//                 [--max-batched-tokens=512] [--max-seqs=64] [--max-waiting=1024]
//                 [--preemption=swap|recompute] [--threads=0] [--max-model-len=0]
//                 [--batching=continuous|static|padded] [--kv-reservation=paged|contiguous]
//                 [--no-prefix-caching] [--no-cuda-graphs]
//                 [--weights=auto|f32|bf16] [--activations=f32|bf16]
//                 [--kv-dtype=f32|bf16]
//                 [--worker-port=N [--worker-bind=127.0.0.1]]     a worker
//                 [--workers=host:port,host:port [--resubmit-lost]] a front
//                 [--openssl.certificate=PEM --openssl.key=PEM --openssl.cafile=PEM]
//                                                                 TLS between nodes
// Options come through CAF's configuration (also caf-application.ini).
// Without --model it serves the default tiny model, written on first run (a
// front reads only its tokenizer, for prefix affinity, and its chat template).
// SIGINT or SIGTERM: live requests end as aborted, then the server exits.

#include "tools/command_line.hpp"
#include "tools/serve_modes.hpp"

#include <caf/openssl/manager.hpp>

#include <filesystem>
#include <iostream>

// NOTE: not CAF_MAIN: CAF 0.17's exec_main drops the exit code.
int main(int argc, char** argv) {
  kvactor::tools::serve_config cfg;
  if (!kvactor::tools::parse_command_line(cfg, argc, argv, "kvactor-serve", "caf-application.ini"))
    return 2;
  if (cfg.cli_helptext_printed)
    return 0;
  if (!cfg.workers.empty() && cfg.worker_port >= 0) {
    std::cerr
      << "kvactor-serve: --workers (a front) and --worker-port (a worker) exclude each other\n";
    return 2;
  }
  if (!cfg.chat_template.empty()) { // checked before the model loads
    if (cfg.http_port <= 0) {
      std::cerr << "kvactor-serve: --chat-template needs --http-port: only the HTTP front "
                   "renders chats\n";
      return 2;
    }
    if (std::error_code ec; !std::filesystem::is_regular_file(cfg.chat_template, ec)) {
      std::cerr << "kvactor-serve: --chat-template=" << cfg.chat_template << ": not a file\n";
      return 2;
    }
  }
  // TLS between nodes: CAF's own --openssl.certificate, --openssl.key and
  // --openssl.cafile (docs/several-machines.md, "TLS between nodes").
  if (cfg.tls())
    cfg.load<caf::openssl::manager>();
  caf::actor_system sys{cfg};
  if (!cfg.workers.empty())
    return kvactor::tools::serve_front(sys, cfg);
  if (cfg.worker_port >= 0)
    return kvactor::tools::serve_worker(sys, cfg);
  return kvactor::tools::serve_single(sys, cfg);
}
