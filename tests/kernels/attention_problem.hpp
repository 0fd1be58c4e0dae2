#pragma once
// Random paged-attention problems with scattered block tables, and the plain
// reference (double accumulation, contiguous gather, two-pass softmax).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/params.hpp"
#include "tests/kernels/check.hpp"

namespace kvactor::kernels::testing {

struct attention_config {
  dtype type = dtype::f32;
  int32_t head_dim = 64;
  int32_t block_size = 16;
  int32_t num_heads = 2;
  int32_t num_kv_heads = 2;
  std::vector<int32_t> seq_lens;    // keys per sequence, new tokens included
  std::vector<int32_t> query_lens;  // empty: decode (one query per sequence)
  int32_t query_pad = 0;            // extra elements between query rows (fused QKV layout)

  std::string name() const;
};

// The config of a test parameterised by dtype, head_dim, block size and GQA
// ratio: 2 KV heads with `ratio` query heads each; no sequences yet.
inline attention_config gqa_config(dtype type, int32_t head_dim, int32_t block_size,
                                   int32_t ratio) {
  attention_config c;
  c.type = type;
  c.head_dim = head_dim;
  c.block_size = block_size;
  c.num_kv_heads = 2;
  c.num_heads = 2 * ratio;
  return c;
}

struct attention_problem {
  attention_config config;
  int32_t num_tokens = 0;
  int32_t num_blocks = 0;
  int32_t max_blocks_per_seq = 0;
  // [num_blocks, block_size, num_kv_heads, head_dim] of type
  std::vector<uint8_t> k_cache;
  // [num_blocks, block_size, num_kv_heads, head_dim] of type
  std::vector<uint8_t> v_cache;
  std::vector<uint8_t> query;             // [num_tokens, num_heads * head_dim + query_pad] of type
  std::vector<int32_t> block_tables;      // [num_seqs, max_blocks_per_seq]
  std::vector<int32_t> seq_lens;          // [num_seqs]
  std::vector<int32_t> query_start_loc;   // [num_seqs + 1], empty for decode

  size_t out_bytes() const;
  // Params over this problem's host memory (or the given copies of it).
  paged_attention_params params(void* out) const;
  std::vector<double> reference() const;  // [num_tokens, num_heads, head_dim]
};

// Unused cache slots hold NaN, so reading past a context shows up.
attention_problem make_attention_problem(const attention_config& config, uint32_t seed);

// Converts `count` elements of `type` to float.
std::vector<float> to_floats(dtype type, const void* data, size_t count);

tolerance attention_tolerance(dtype type);

} // namespace kvactor::kernels::testing
