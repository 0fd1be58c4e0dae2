#include "model/forward/batch.hpp"

#include <algorithm>

#include "base/assert.hpp"

namespace kvactor::model {

forward_batch forward_batch::build(std::span<const sequence_chunk> seqs, int32_t block_size) {
  KVACTOR_ASSERT(block_size > 0, "block size must be positive");
  forward_batch b;
  b.block_size = block_size;
  std::size_t num_tokens = 0;
  for (const sequence_chunk& s : seqs) {
    KVACTOR_ASSERT(!s.tokens.empty(), "a sequence in a step computes at least one token");
    KVACTOR_ASSERT(s.start >= 0, "negative start");
    num_tokens += s.tokens.size();
    const auto needed =
      (s.start + static_cast<int64_t>(s.tokens.size()) + block_size - 1) / block_size;
    KVACTOR_ASSERT(static_cast<int64_t>(s.block_table.size()) >= needed,
                   "block table too short for the step");
    b.max_blocks_per_seq = std::max(b.max_blocks_per_seq, static_cast<int32_t>(needed));
  }
  b.token_ids.reserve(num_tokens);
  b.positions.reserve(num_tokens);
  b.slot_mapping.reserve(num_tokens);
  b.block_tables.assign(seqs.size() * static_cast<std::size_t>(b.max_blocks_per_seq), 0);
  b.query_start_loc.push_back(0);
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const sequence_chunk& s = seqs[i];
    const int32_t n = static_cast<int32_t>(s.tokens.size());
    for (int32_t j = 0; j < n; ++j) {
      const int32_t pos = s.start + j;
      const int32_t block = s.block_table[static_cast<std::size_t>(pos / block_size)];
      KVACTOR_ASSERT(block >= 0, "a position's block is missing");
      b.token_ids.push_back(s.tokens[static_cast<std::size_t>(j)]);
      b.positions.push_back(pos);
      b.slot_mapping.push_back(int64_t{block} * block_size + pos % block_size);
    }
    const auto num_blocks = static_cast<std::size_t>((s.start + n + block_size - 1) / block_size);
    std::copy_n(s.block_table.begin(), num_blocks,
                b.block_tables.begin() + static_cast<std::ptrdiff_t>(i * b.max_blocks_per_seq));
    b.seq_lens.push_back(s.start + n);
    b.query_start_loc.push_back(b.query_start_loc.back() + n);
    if (s.sample) b.sample_rows.push_back(b.query_start_loc.back() - 1);
  }
  return b;
}

} // namespace kvactor::model
