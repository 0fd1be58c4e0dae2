#pragma once
// batch_upload: a step's metadata packed into one buffer, so a device with
// memory of its own receives it in one host -> device copy.
//
//   offset 0 ┬ token_ids        i32 [num_tokens]
//            ├ seq_lens         i32 [num_seqs]
//            ├ query_start_loc  i32 [num_seqs + 1]
//            ├ sample_rows      i32 [num_sample_rows]
//            ├ block_tables     i32 [num_seqs, table_width]
//            ├ slot_mapping     i64 [num_tokens]
//            ├ rope_cos         f32 [num_tokens, rope_half]
//            └ rope_sin         f32 [num_tokens, rope_half]
//   every section starts at a multiple of 16 bytes; total_bytes too.
//
// A table may be wider than the batch's widest (table_width >=
// max_blocks_per_seq, the rest of each row 0): a step captured as a CUDA
// graph keeps its layout, and the attention's split plan, while its
// sequences grow (model/cuda/cuda_transformer.hpp).
//
// NOTE: positions travel as their RoPE angles, computed here in double by
// layers::rope_angles exactly as the CPU forward pass computes them, so both
// devices rotate q and k by the same floats.

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/config.hpp"
#include "model/forward/batch.hpp"

namespace kvactor::model {

struct batch_upload_layout {
  std::size_t token_ids = 0;
  std::size_t seq_lens = 0;
  std::size_t query_start_loc = 0;
  std::size_t sample_rows = 0;
  std::size_t block_tables = 0;
  std::size_t slot_mapping = 0;
  std::size_t rope_cos = 0;
  std::size_t rope_sin = 0;
  std::size_t total_bytes = 0;
  int32_t table_width = 0; // block table columns
  int32_t rope_half = 0;   // head_dim / 2

  // The layout for these counts. Every offset and the total grow with
  // every count, so the layout of the largest counts sizes a buffer for any
  // smaller step.
  static batch_upload_layout for_counts(int32_t num_tokens, int32_t num_seqs,
                                        int32_t num_sample_rows, int32_t table_width,
                                        int32_t rope_half);
  // The layout of `b`, its tables table_width wide (0: b.max_blocks_per_seq,
  // else at least that).
  static batch_upload_layout of(const forward_batch& b, int32_t rope_half,
                                int32_t table_width = 0);
  // The layout of the largest step: every row of every sequence sampled.
  static batch_upload_layout capacity(int32_t max_num_tokens, int32_t max_num_seqs,
                                      int32_t max_blocks_per_seq, int32_t rope_half);
};

// The widest block table a step can carry: a sequence that fills the
// model's context (max_position_embeddings).
int32_t max_blocks_per_seq(const model_config& config, int32_t block_size);

// The table width of a step captured as a CUDA graph: the smallest power
// of two from 16 that holds max_blocks_per_seq, at most `limit` (the
// model's context, max_blocks_per_seq above), so that a graph serves a
// sequence through many blocks of growth.
int32_t graph_table_width(int32_t max_blocks_per_seq, int32_t limit);

// Writes `b` into `out` at `layout` (batch_upload_layout::of(b, inv_freq.size(), any
// width)).
// inv_freq: [rope_half]; out: [layout.total_bytes] or more, 16-byte aligned
void pack_batch(const forward_batch& b, std::span<const double> inv_freq,
                const batch_upload_layout& layout, std::span<std::byte> out);

} // namespace kvactor::model
