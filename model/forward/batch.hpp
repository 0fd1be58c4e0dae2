#pragma once
// forward_batch: what one forward pass reads besides the weights and the
// cache — a step's mix of prefill chunks and decode tokens, flattened into the
// arrays the kernels take.
//
//   sequence s: tokens [start, start + n) of its history, n >= 1
//   token rows: sequences one after another (query_start_loc)
//   slot of a token at position p: block_table[p / block_size] * block_size + p % block_size

#include <cstdint>
#include <span>
#include <vector>

#include "model/token_id.hpp"

namespace kvactor::model {

// One sequence's share of a step.
struct sequence_chunk {
  int32_t start = 0;                  // tokens [0, start) already have K/V in the cache
  std::span<const token_id> tokens;        // the tokens computed now
  std::span<const int32_t> block_table; // covers positions [0, start + tokens.size())
  bool sample = false;                     // logits of the last token are wanted
};

struct forward_batch {
  std::vector<int32_t> token_ids;       // [num_tokens]
  std::vector<int32_t> positions;       // [num_tokens]
  std::vector<int64_t> slot_mapping;    // [num_tokens]
  std::vector<int32_t> block_tables;    // [num_seqs, max_blocks_per_seq], padded with 0
  std::vector<int32_t> seq_lens;        // [num_seqs]: start + n
  std::vector<int32_t> query_start_loc; // [num_seqs + 1]
  std::vector<int32_t> sample_rows;     // token rows whose logits are computed, in sequence order
  int32_t max_blocks_per_seq = 0;
  int32_t block_size = 0;

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_seqs() const { return static_cast<int32_t>(seq_lens.size()); }
  int32_t num_sample_rows() const { return static_cast<int32_t>(sample_rows.size()); }
  // Every sequence computes one token (the decode kernels' layout).
  bool is_decode() const { return num_tokens() == num_seqs(); }

  // Flattens `seqs`; a chunk without tokens or a block table too short for
  // its positions is a broken invariant of the caller.
  static forward_batch build(std::span<const sequence_chunk> seqs, int32_t block_size);
};

} // namespace kvactor::model
