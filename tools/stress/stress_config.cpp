#include "tools/stress/stress_config.hpp"

#include "tools/node_config.hpp"

#include <filesystem>

namespace kvactor::stress {

stress_config::stress_config() {
  kvactor::tools::configure_node(*this);
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec)
    serve = (self.parent_path() / "kvactor-serve").string();
  opt_group{custom_options_, "global"}
    .add(mode, "mode",
         "in-process (spawn the runtime here), tcp (through a line-protocol server), "
         "http (through the HTTP front) or cluster (a front here, worker processes)")
    .add(requests, "requests", "number of requests")
    .add(seed, "seed", "seed of the workload and the faults")
    .add(rate, "rate", "Poisson arrival rate in requests/s (0: all at once)")
    .add(connections, "connections", "client connections (tcp)")
    .add(cancel_fraction, "cancel-fraction", "fraction of requests cancelled at a random moment")
    .add(preempt_every, "preempt-every", "force a preemption every K steps (in-process; 0: off)")
    .add(disconnect_fraction, "disconnect-fraction",
         "fraction of requests whose connection drops mid-stream (tcp)")
    .add(malformed_fraction, "malformed-fraction",
         "fraction of requests preceded by a malformed line (tcp)")
    .add(choices_fraction, "choices-fraction",
         "fraction of the seeded requests with n of 2 to 4 choices")
    .add(model, "model", "model folder (default: a small generated tiny model)")
    .add(kv_cache_kib, "kv-cache-kib", "device KV budget in KiB of the run under faults")
    .add(swap_kib, "swap-kib", "host swap space in KiB of the run under faults")
    .add(block_size, "block-size", "tokens per KV block")
    .add(max_seqs, "max-seqs", "sequences per step")
    .add(max_batched_tokens, "max-batched-tokens", "tokens per step")
    .add(preemption, "preemption", "swap or recompute (when the pool runs out)")
    .add(activations, "activations", "the products' inputs: f32 or bf16 (both runs)")
    .add(kv_dtype, "kv-dtype", "the KV cache's elements: f32 or bf16 (both runs)")
    .add(threads, "threads", "CPU device threads (0: all cores)")
    .add(host, "host", "server address (tcp)")
    .add(port, "port", "server port (tcp; 0: start a server in this process)")
    .add(timeout_s, "timeout-s", "seconds for every request to end")
    .add(stall_s, "stall-s", "seconds without any event before the run counts as stalled")
    .add(jitter_ms, "jitter-ms",
         "delay step and swap completions and cancels by a seeded random 0..N ms (0: off)")
    .add(quiet, "quiet", "no progress line")
    .add(workers, "workers", "cluster: kvactor-serve worker processes")
    .add(serve, "serve", "cluster: the kvactor-serve binary (default: beside kvactor-stress)")
    .add(kill_at, "kill-at",
         "cluster: kill and restart worker 1 once this fraction of requests has ended")
    .add(resubmit_lost, "resubmit-lost",
         "cluster: the front starts the killed worker's requests that streamed nothing again "
         "on the other");
}

} // namespace kvactor::stress
