#pragma once
// stress_config: kvactor-stress's options, parsed by CAF's configuration
// (so --scheduler.max-threads and caf-application.ini work as well).

#include "kvactor/kvactor.hpp"

#include <string>

namespace kvactor::stress {

struct stress_config : caf::actor_system_config {
  std::string mode = "in-process";   // in-process, tcp, http or cluster
  int32_t requests = 2000;
  int64_t seed = 1;
  double rate = 0;                   // requests/s (Poisson); 0: all at once
  int32_t connections = 4;
  double cancel_fraction = 0.1;
  int32_t preempt_every = 0;
  double disconnect_fraction = 0;
  double malformed_fraction = 0;
  double choices_fraction = 0.1;     // of the seeded requests: n of 2 to 4
  std::string model;                 // empty: a small generated model
  int64_t kv_cache_kib = 1024;
  int64_t swap_kib = 1024;
  int32_t block_size = 16;
  int32_t max_seqs = kvactor::default_max_num_seqs;
  int32_t max_batched_tokens = kvactor::default_max_num_batched_tokens;
  std::string preemption = "swap";
  std::string activations = "f32";   // the products' inputs (bf16: exactness must hold there too)
  std::string kv_dtype = "f32";      // the KV cache's elements
  int32_t threads = 1;
  std::string host = "127.0.0.1";
  int32_t port = 0;                  // tcp: 0 starts a server in this process
  double timeout_s = 600;
  double stall_s = 60;               // stop waiting after this long without an event
  int32_t jitter_ms = 0;             // completions and cancels up to this late (seeded); 0: off
  bool quiet = false;
  int32_t workers = 2;               // cluster: worker processes
  std::string serve;                 // cluster: kvactor-serve (default: beside this tool)
  double kill_at = 0.3;              // cluster: kill a worker once this fraction has ended
  bool resubmit_lost = false;        // cluster: the front's --resubmit-lost

  stress_config();
};

} // namespace kvactor::stress
