#pragma once
// kvactor-serve's options, through CAF's configuration (command line and
// caf-application.ini).

#include "cluster/protocol.hpp"
#include "tools/node_config.hpp"

namespace kvactor::tools {

struct serve_config : caf::actor_system_config {
  std::string host = "127.0.0.1";
  int32_t port = 7878;
  int32_t http_port = 0;
  std::string served_model_name;
  std::string model;
  std::string chat_template; // a Jinja file instead of the model's template
  std::string device = "cpu";
  int64_t kv_cache_mib = 0; // 0: 256 on the CPU; on a GPU, gpu_memory_utilization's
  double gpu_memory_utilization = kvactor::default_gpu_memory_utilization;
  int64_t swap_mib = kvactor::default_swap_bytes >> 20;
  int32_t block_size = 0;
  int32_t max_batched_tokens = kvactor::default_max_num_batched_tokens;
  int32_t max_seqs = kvactor::default_max_num_seqs;
  int32_t max_waiting = kvactor::default_max_waiting;
  int32_t max_connections = 0;       // 0: the descriptor limit less 128
  int32_t max_request_choices = 256; // HTTP: prompts x n per request
  int32_t request_timeout_s = 60;    // for a request (a line) to arrive whole
  std::string preemption = "swap";
  int32_t threads = 0;
  int32_t max_model_len = 0;
  std::string batching = "continuous";
  std::string kv_reservation = "paged";
  bool no_prefix_caching = false;
  bool no_cuda_graphs = false;
  std::string weights = "auto";
  std::string activations = "auto";
  std::string kv_dtype = "auto";
  int32_t fault_jitter_ms = 0;
  // Several machines (docs/several-machines.md).
  int32_t worker_port = -1; // >= 0: a worker (0: any free port)
  std::string worker_bind = "127.0.0.1";
  std::string workers;      // a front: host:port,host:port
  bool resubmit_lost = false; // a front: start a lost worker's unstarted requests elsewhere
  int32_t worker_protocol_version = 0; // testing: a worker claiming another version

  // TLS between nodes: all three of CAF's --openssl.* files given.
  bool tls() const {
    return !openssl_certificate.empty() && !openssl_key.empty() && !openssl_cafile.empty();
  }

  serve_config() {
    configure_node(*this);
    opt_group{custom_options_, "global"}
      .add(host, "host", "address to listen on")
      .add(port, "port", "TCP port of the line protocol (0: any free one)")
      .add(http_port, "http-port", "TCP port of the OpenAI-compatible HTTP front (0: off)")
      .add(served_model_name, "served-model-name",
           "the model's name in the HTTP API (default: the model folder's name)")
      .add(model, "model", "a Hugging Face model folder or a GGUF file (default: the tiny model)")
      .add(chat_template, "chat-template",
           "HTTP: a Jinja chat template file to use instead of the model's")
      .add(device, "device", "cpu, cuda or cuda:N")
      .add(kv_cache_mib, "kv-cache-mib",
           "device KV cache budget in MiB (0: 256 on the CPU; on a GPU what "
           "--gpu-memory-utilization leaves after the weights)")
      .add(gpu_memory_utilization, "gpu-memory-utilization",
           "the share of the GPU's memory to take, the KV cache filling what the weights "
           "leave (with --kv-cache-mib=0)")
      .add(swap_mib, "swap-mib", "pinned host memory for swapped-out sequences, MiB")
      .add(block_size, "block-size", "tokens per KV block (0: the device's default, 8 on the CPU)")
      .add(max_batched_tokens, "max-batched-tokens", "tokens per step (chunked prefill budget)")
      .add(max_seqs, "max-seqs", "sequences per step")
      .add(max_waiting, "max-waiting", "waiting requests before new ones are refused")
      .add(max_connections, "max-connections",
           "client connections of both front doors together; more are told so and closed "
           "(0: the descriptor limit less 128)")
      .add(max_request_choices, "max-request-choices",
           "HTTP: prompts x n of one request (also at most a quarter of --max-waiting)")
      .add(request_timeout_s, "request-timeout",
           "seconds for an HTTP request, or a line of the line protocol, to arrive whole")
      .add(preemption, "preemption", "swap or recompute")
      .add(threads, "threads", "CPU device threads (0: all cores)")
      .add(max_model_len, "max-model-len", "longest prompt + output (0: the model's context)")
      .add(batching, "batching",
           "continuous, static (a batch runs to its end) or padded (static, ended rows "
           "compute on)")
      .add(kv_reservation, "kv-reservation",
           "paged, or contiguous (max-model-len slots per request from admission)")
      .add(no_prefix_caching, "no-prefix-caching", "never reuse KV blocks by content")
      .add(no_cuda_graphs, "no-cuda-graphs",
           "CUDA: launch every step kernel by kernel (no decode step as a CUDA graph)")
      .add(weights, "weights",
           "matrices in memory: f32, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, "
           "q6_k, iq4_nl or iq4_xs (CPU: quantised at load, 2 to 8 bits a weight in blocks; "
           "lossy), or auto (bf16 "
           "for a bf16 checkpoint, else f32; a GGUF file's quantised matrices as stored)")
      .add(activations, "activations",
           "the products' input rows: f32 (exact), bf16 (rounded to bf16; CPU: AMX or "
           "AVX512_BF16, faster for many rows; CUDA: bf16 weights on the device; lossy), or "
           "auto (bf16 on CUDA with bf16 matrices, else f32)")
      .add(kv_dtype, "kv-dtype",
           "KV cache elements: f32, bf16 (twice the blocks per MiB, K/V rounded to bf16), or "
           "auto (bf16 on CUDA, else f32)")
      .add(fault_jitter_ms, "fault-jitter-ms",
           "testing fault: report step and swap completions up to N ms late (0: off)")
      .add(worker_port, "worker-port",
           "serve as a worker: publish the runtime on this port for fronts (0: any free one)")
      .add(worker_bind, "worker-bind", "the worker's address (loopback unless told otherwise)")
      .add(workers, "workers", "serve as a front: route to these workers (host:port,host:port)")
      .add(resubmit_lost, "resubmit-lost",
           "a front: a request on a lost worker that has streamed nothing starts again on "
           "another worker (else it ends with worker_lost)")
      .add(worker_protocol_version, "worker-protocol-version",
           "testing: a worker that claims this cluster protocol version (0: its own)");
  }
};

} // namespace kvactor::tools
