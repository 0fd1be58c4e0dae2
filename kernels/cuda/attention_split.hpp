#pragma once
// Split-K (flash-decoding) decode attention: when and how finely the CUDA
// launcher splits each sequence's context across thread blocks. Pure
// functions of the batch, the context and the device's SM count; host code
// only (C++17, also compiled by nvcc).
//
//   one pass:  grid = num_seqs * head_groups            (one block walks the whole context)
//   split:     grid = num_seqs * head_groups * num_splits, chunk keys per block
//              -> partial (max m, sum l, unnormalised out) per (row, split) in scratch
//              -> merge kernel, one block per (sequence, query head):
//                 M = max_s m_s,  out = sum_s e^(m_s - M) out_s / sum_s e^(m_s - M) l_s
//
// The launcher knows no context length on the host (seq_lens is device
// memory), so it plans for max_context = max_blocks_per_seq * block_size;
// blocks whose chunk starts past their sequence's end write an empty partial
// (m = -inf, l = 0) that the merge skips.

#include <cstdint>

namespace kvactor::kernels {

struct split_plan {
  int32_t num_splits = 1;  // thread blocks per (sequence, head group); 1 = the one-pass kernel
  int32_t chunk = 0;       // keys per split, a multiple of split_tile
};

// keys per tile of the attention kernel (its thread count)
constexpr int32_t split_tile = 128;
// The smallest chunk: one tile. On an H200 (2026-11-27) a block walks its
// keys at a few GB/s, so that a one-pass decode of 512 keys at batch 1 took
// 95 us a layer where the split of 4096 keys took 79; the merge is a few us.
constexpr int32_t split_min_chunk = split_tile;
constexpr int32_t split_blocks_per_sm = 2;   // the split grid aims at this many blocks per SM
constexpr int32_t split_max_head_dim = 128;  // the CUDA kernels' largest head_dim
constexpr int32_t split_max_group = 8;       // and largest query heads per block

// Decode only. Splits when the one-pass grid (num_seqs * num_head_groups
// blocks) leaves SMs idle and the context holds at least two minimal chunks;
// then into as many chunks as bring the grid to split_blocks_per_sm blocks
// per SM, each at least split_min_chunk keys.
constexpr split_plan plan_attention_split(int32_t num_seqs, int32_t num_head_groups,
                                          int64_t max_context, int32_t num_sms) {
  const int64_t blocks = static_cast<int64_t>(num_seqs) * num_head_groups;
  if (num_sms <= 0 || blocks <= 0 || blocks >= num_sms || max_context < 2 * split_min_chunk)
    return {};
  const int64_t by_context = max_context / split_min_chunk;
  const int64_t by_device = static_cast<int64_t>(split_blocks_per_sm) * num_sms / blocks;
  const int64_t n = by_context < by_device ? by_context : by_device;
  if (n < 2) return {};
  const int64_t per_split = (max_context + n - 1) / n;
  const int64_t chunk = (per_split + split_tile - 1) / split_tile * split_tile;
  return split_plan{static_cast<int32_t>((max_context + chunk - 1) / chunk),
                    static_cast<int32_t>(chunk)};
}

// Scratch of a split launch, in floats:
//   out: [num_seqs * num_heads, num_splits, head_dim],
//   then m and l: [num_seqs * num_heads, num_splits] each.
constexpr int64_t split_scratch_floats(int32_t num_seqs, int32_t num_heads, int32_t head_dim,
                                       int32_t num_splits) {
  return static_cast<int64_t>(num_seqs) * num_heads * num_splits * (head_dim + 2);
}

// Enough scratch for every plan on a device of num_sms SMs (head_dim <= 128,
// groups <= 8): a plan keeps num_seqs * head_groups * num_splits within
// split_blocks_per_sm * num_sms blocks.
constexpr int64_t max_split_scratch_floats(int32_t num_sms) {
  return static_cast<int64_t>(split_blocks_per_sm) * num_sms * split_max_group *
         (split_max_head_dim + 2);
}

} // namespace kvactor::kernels
