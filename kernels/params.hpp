#pragma once
// Plain argument structs of the KV-cache kernels, shared by the CPU kernels,
// the CUDA kernels (nvcc, C++17) and the emulator tests. Raw pointers and sizes
// by value, FlashInfer style; every pointer must be readable by the device that
// runs the kernel (host memory for the CPU device, device memory for CUDA) and
// stay valid until the stream has run the kernel.
//
// KV cache of one layer, K and V alike (row-major):
//   k_cache: [num_blocks, block_size, num_kv_heads, head_dim]
// slot = block_id * block_size + offset_in_block addresses one token row
// [num_kv_heads, head_dim], so writing a token is one contiguous copy.

#include <cstdint>

#include "kernels/dtype.hpp"

namespace kvactor::kernels {

// Scatters new K/V rows into the cache: row i goes to slot_mapping[i];
// slot -1 (padding) is skipped. Input and cache share `type`.
struct cache_write_params {
  const void* key;              // [num_tokens, num_kv_heads, head_dim], rows key_stride apart
  const void* value;            // [num_tokens, num_kv_heads, head_dim], rows value_stride apart
  void* k_cache;                // [num_blocks, block_size, num_kv_heads, head_dim]
  void* v_cache;                // [num_blocks, block_size, num_kv_heads, head_dim]
  const int64_t* slot_mapping;  // [num_tokens]
  int32_t num_tokens;
  int32_t num_kv_heads;
  int32_t head_dim;
  dtype type;
  // Elements from one token's row to the next; 0 = num_kv_heads * head_dim
  // (contiguous). Lets K and V be read in place from a fused QKV buffer.
  // CUDA: stride * dtype_size must be a multiple of 16.
  int64_t key_stride = 0;
  int64_t value_stride = 0;
};

// Scratch of split-K decode attention on CUDA (cuda/attention_split.hpp):
// device memory that only the launch's stream uses, reused launch after
// launch. Empty (the default) = never split; the CPU device ignores it.
struct attention_workspace {
  float* data = nullptr;
  int64_t num_floats = 0;
  int32_t num_sms = 0;  // streaming multiprocessors of the device the split is planned for
};

// Paged attention over the cache for decode and prefill/extend alike.
// Sequence s owns query tokens [query_start_loc[s], query_start_loc[s+1]) and
// has seq_lens[s] keys in the cache, its new tokens included (write them with
// cache_write first). Query token i of a chunk of n tokens sits at position
// seq_lens[s] - n + i and attends causally to keys 0 ..= that position.
// Decode: query_start_loc == nullptr means one query token per sequence
// (num_tokens == num_seqs). GQA: query head h reads KV head
// h / (num_heads / num_kv_heads).
struct paged_attention_params {
  void* out;                       // [num_tokens, num_heads, head_dim]
  const void* query;               // [num_tokens, num_heads, head_dim], rows query_stride apart
  const void* k_cache;             // [num_blocks, block_size, num_kv_heads, head_dim]
  const void* v_cache;             // [num_blocks, block_size, num_kv_heads, head_dim]
  const int32_t* block_tables;     // [num_seqs, max_blocks_per_seq]
  const int32_t* seq_lens;         // [num_seqs]
  const int32_t* query_start_loc;  // [num_seqs + 1], or nullptr for decode
  int32_t num_seqs;
  int32_t num_tokens;
  int32_t num_heads;
  int32_t num_kv_heads;
  int32_t head_dim;
  int32_t block_size;
  int32_t max_blocks_per_seq;
  float scale;  // usually 1 / sqrt(head_dim)
  dtype type;   // query, cache and out
  // Elements from one query token's row to the next; 0 = num_heads * head_dim
  // (contiguous). Lets the query be read in place from a fused QKV buffer.
  int64_t query_stride = 0;
  // CUDA decode: scratch where the launcher may split long contexts, from
  // device::split_workspace(stream) of the launch's stream; {} = one pass.
  attention_workspace workspace{};
};

// Copies whole blocks within one pool (copy-on-write), every layer, K and V.
struct copy_blocks_params {
  void* cache;            // [num_layers, 2, num_blocks, block_size, num_kv_heads, head_dim]
  const int32_t* pairs;   // [num_pairs, 2]: (src block, dst block)
  int32_t num_pairs;
  int32_t num_layers;
  int64_t num_blocks;
  int64_t block_bytes;    // block_size * num_kv_heads * head_dim * dtype_size
};

// Moves whole blocks between two pools of the same block shape (a swap:
// device <-> pinned host, which kernels reach through unified addressing),
// every layer, K and V, in one launch. The pairs travel in the parameters
// (under the 4 KiB kernel-parameter limit), so nothing needs an upload.
struct swap_blocks_params {
  static constexpr int32_t max_pairs = 240;
  const void* src;         // [num_layers, 2, src_num_blocks, block_size, num_kv_heads, head_dim]
  void* dst;               // [num_layers, 2, dst_num_blocks, block_size, num_kv_heads, head_dim]
  int64_t src_num_blocks;
  int64_t dst_num_blocks;
  int64_t block_bytes;     // multiple of 16
  int32_t num_layers;
  int32_t num_pairs;       // 0 ..= max_pairs
  int32_t pairs[2 * max_pairs]; // [num_pairs, 2]: (src block, dst block)
};

} // namespace kvactor::kernels
