#pragma once
// How a runtime is built (spawn_runtime): the model, the device, the pools,
// the limits and the modes. No CAF here: the bookkeeping core takes its
// modes from this header too.

#include "defaults.hpp" // beside this header, in the build tree and where installed

#include <cstdint>
#include <optional>
#include <string>

namespace kvactor {

// What a sequence gives up when the device pool runs out.
enum class preemption_mode : uint8_t {
  swap,      // copy the KV to the host pool, copy it back later
  recompute, // drop the KV, prefill prompt and output again later
};

// When new sequences may start. The last two exist for comparisons (the
// serving benchmark).
enum class batching_mode : uint8_t {
  continuous, // whenever a step has room
  fixed,      // "static" batching: a batch of up to max_num_seqs starts together
              // and runs to its last end before the next is admitted
  padded,     // static batching as a fixed-shape engine runs it: a sequence
              // that ends stays in its batch as a padding row, computing
              // tokens that nobody receives, until the batch's last end
};

// How much KV memory a sequence holds.
enum class kv_reservation : uint8_t {
  paged,      // the blocks its tokens fill, allocated as they come
  contiguous, // max_model_len slots reserved at admission, as systems without
              // paging must (its blocks still fill as tokens come; admission
              // counts the reservation against the device pool)
};

// The element type of the matrices, the products' input rows or the KV cache.
enum class number_format : uint8_t {
  f32,  // exact
  bf16, // half the bytes; rounds to 8 bits of mantissa
  q8_0, // weights only (CPU): blocks of 32 8-bit integers and a scale, 17/32 of bf16's bytes
  q4_0, // weights only (CPU): blocks of 32 4-bit integers and a scale, 9/32 of bf16's bytes
  q4_k, // weights only (CPU): 4-bit integers, a 6-bit scale and min per 32, 9/32 of bf16's bytes
  q6_k, // weights only (CPU): 6-bit integers, an 8-bit scale per 16, 105/256 of bf16's bytes
  q5_0, // weights only (CPU): blocks of 32 5-bit integers and a scale, 11/32 of bf16's bytes
  q5_k, // weights only (CPU): 5-bit integers, a 6-bit scale and min per 32, 11/32 of bf16's bytes
  q4_1, // weights only (CPU): blocks of 32 4-bit integers, a scale and a min, 5/16 of bf16's bytes
  q5_1, // weights only (CPU): blocks of 32 5-bit integers, a scale and a min, 3/8 of bf16's bytes
  q2_k, // weights only (CPU): 2-bit integers, a 4-bit scale and min per 16, 21/128 of bf16's bytes
  q3_k, // weights only (CPU): 3-bit integers, a 6-bit scale per 16, 55/256 of bf16's bytes
  // weights only (CPU): 4-bit indices into 16 unevenly spaced levels ...
  iq4_nl, // ... in blocks of 32 with a scale, 9/32 of bf16's bytes
  iq4_xs, // ... with a 6-bit scale per 32, 17/64 of bf16's bytes
};

struct engine_config {
  std::string model_dir;      // a Hugging Face checkpoint folder
  std::string device = "cpu"; // cpu, cuda, cuda:N
  // The device KV pool; 0: automatic: default_kv_cache_bytes on the CPU, on
  // a GPU what gpu_memory_utilization of its memory leaves after the weights
  // and the forward pass's buffers.
  int64_t kv_cache_bytes = default_kv_cache_bytes;
  double gpu_memory_utilization = default_gpu_memory_utilization; // (0, 1]
  int64_t swap_bytes = default_swap_bytes; // pinned host pool for swapped-out sequences
  int32_t block_size = 0;    // tokens per KV block; 0: the device's default
                             // (default_block_size)
  int32_t max_model_len = 0; // longest prompt + output; 0: the model's context
  int32_t max_num_batched_tokens = default_max_num_batched_tokens;
  int32_t max_num_seqs = default_max_num_seqs;
  int32_t max_waiting = default_max_waiting; // more waiting requests are refused: overloaded
  preemption_mode preemption = preemption_mode::swap;
  batching_mode batching = batching_mode::continuous;
  kv_reservation reservation = kv_reservation::paged;
  bool prefix_caching = true;
  // CUDA: decode steps whose shape repeats run as CUDA graphs, one launch
  // each (false: kernel by kernel, as vLLM's --enforce-eager).
  bool cuda_graphs = true;
  // Matrices in memory; nullopt (auto): bf16 when the checkpoint stores
  // bf16 or the activations are bf16, else f32 (bf16 computes the same
  // results as its widened f32 values in half the memory). q8_0, q4_0,
  // q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl or iq4_xs:
  // quantised at load (CPU device, f32 activations; lossy: the products
  // take their input rows in 8-bit blocks too). A GGUF file's quantised
  // matrices stay as the file stores them.
  std::optional<number_format> weights{};
  // The products' input rows: f32 (exact), or bf16 (rounded to bf16, fp32
  // sums; CPU: AMX or AVX512_BF16, faster for many rows; CUDA: cuBLAS bf16
  // GEMM; lossy), which keeps the matrices bf16 (on CUDA the only way to bf16
  // device weights). nullopt (auto): bf16 on CUDA with bf16 matrices, else f32.
  std::optional<number_format> activations{};
  // KV cache elements: bf16 holds twice the blocks in the same bytes, K/V and
  // attention rounded to bf16 (and reads half the bytes per decoded token).
  // nullopt (auto): bf16 on CUDA, f32 on the CPU (kv_dtype_of).
  std::optional<number_format> kv_dtype{};
  int32_t num_threads = 0; // CPU device threads; 0: all cores
  // A fault for stress runs: each step's and swap's completion, and each
  // refused swap-in, reaches the scheduler a seeded random 0..fault_jitter_ms
  // late. 0: off.
  int32_t fault_jitter_ms = 0;
  uint64_t fault_seed = 1;
};

// The names the tools' options take (parse_option in kvactor.hpp reads them
// back): swap, recompute; continuous, static, padded; paged, contiguous;
// f32, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl,
// iq4_xs.
const char* to_string(preemption_mode x);
const char* to_string(batching_mode x);
const char* to_string(kv_reservation x);
const char* to_string(number_format x);

// The KV cache's elements `e` asks for, auto resolved by its device.
inline number_format kv_dtype_of(const engine_config& e) {
  return e.kv_dtype.value_or(e.device.starts_with("cuda") ? number_format::bf16
                                                          : number_format::f32);
}

// The block size a device serves best, what block_size 0 picks: 8 tokens on
// the CPU (cpu_block_size), where smaller blocks cost its attention kernel
// nothing measurable and halve the slots that each sequence's last, partly
// filled block leaves unused (tools/bench/README.md); 16 on CUDA
// (cuda_block_size).
int32_t default_block_size(const std::string& device);

} // namespace kvactor
