#pragma once
// The runtime's default limits, each written once: engine_config's defaults
// (kvactor.hpp), those of the parts below it (scheduler_config,
// model_runner_options) and those of the tools' options. No CAF here: the
// bookkeeping core includes it too.

#include <cstdint>

namespace kvactor {

// Tokens per step: decodes plus prefill chunks.
inline constexpr int32_t default_max_num_batched_tokens = 512;
inline constexpr int32_t default_max_num_seqs = 64;  // sequences per step
inline constexpr int32_t default_max_waiting = 1024; // more waiting requests are refused
inline constexpr int32_t max_choices = 128;          // the most choices (n) of one request
inline constexpr int64_t default_kv_cache_bytes = int64_t{256} << 20; // device KV pool
// The share of a GPU's memory kvactor may take, the KV pool sized to fill it
// (vLLM's gpu_memory_utilization).
inline constexpr double default_gpu_memory_utilization = 0.9;
inline constexpr int64_t default_swap_bytes = int64_t{256} << 20;     // pinned host pool

// Tokens per KV block that each device serves best (default_block_size).
inline constexpr int32_t cpu_block_size = 8;
inline constexpr int32_t cuda_block_size = 16;

} // namespace kvactor
