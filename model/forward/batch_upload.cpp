#include "model/forward/batch_upload.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/assert.hpp"
#include "model/forward/layers.hpp"

namespace kvactor::model {
namespace {

constexpr std::size_t section_alignment = 16;

std::size_t align_up(std::size_t n) {
  return (n + section_alignment - 1) / section_alignment * section_alignment;
}

template <class T>
void put(std::span<std::byte> out, std::size_t offset, const std::vector<T>& v) {
  if (!v.empty()) std::memcpy(out.data() + offset, v.data(), v.size() * sizeof(T));
}

} // namespace

batch_upload_layout batch_upload_layout::for_counts(int32_t num_tokens, int32_t num_seqs,
                                                    int32_t num_sample_rows,
                                                    int32_t table_width, int32_t rope_half) {
  KVACTOR_ASSERT(num_tokens >= 0 && num_seqs >= 0 && num_sample_rows >= 0 && table_width >= 0 &&
                   rope_half >= 0,
                 "negative count");
  const auto t = static_cast<std::size_t>(num_tokens);
  const auto s = static_cast<std::size_t>(num_seqs);
  batch_upload_layout l;
  std::size_t at = 0;
  auto section = [&at](std::size_t bytes) {
    const std::size_t offset = at;
    at = align_up(at + bytes);
    return offset;
  };
  l.token_ids = section(t * sizeof(int32_t));
  l.seq_lens = section(s * sizeof(int32_t));
  l.query_start_loc = section((s + 1) * sizeof(int32_t));
  l.sample_rows = section(static_cast<std::size_t>(num_sample_rows) * sizeof(int32_t));
  l.block_tables = section(s * static_cast<std::size_t>(table_width) * sizeof(int32_t));
  l.slot_mapping = section(t * sizeof(int64_t));
  l.rope_cos = section(t * static_cast<std::size_t>(rope_half) * sizeof(float));
  l.rope_sin = section(t * static_cast<std::size_t>(rope_half) * sizeof(float));
  l.total_bytes = at;
  l.table_width = table_width;
  l.rope_half = rope_half;
  return l;
}

batch_upload_layout batch_upload_layout::of(const forward_batch& b, int32_t rope_half,
                                            int32_t table_width) {
  KVACTOR_ASSERT(table_width == 0 || table_width >= b.max_blocks_per_seq,
                 "block tables narrower than the batch's");
  return for_counts(b.num_tokens(), b.num_seqs(), b.num_sample_rows(),
                    table_width == 0 ? b.max_blocks_per_seq : table_width, rope_half);
}

batch_upload_layout batch_upload_layout::capacity(int32_t max_num_tokens, int32_t max_num_seqs,
                                                  int32_t max_blocks_per_seq, int32_t rope_half) {
  return for_counts(max_num_tokens, max_num_seqs, max_num_seqs, max_blocks_per_seq, rope_half);
}

int32_t max_blocks_per_seq(const model_config& config, int32_t block_size) {
  KVACTOR_ASSERT(block_size > 0, "block size must be positive");
  const int64_t n = (config.max_position_embeddings + block_size - 1) / block_size;
  KVACTOR_ASSERT(n > 0 && n <= INT32_MAX, "context out of range");
  return static_cast<int32_t>(n);
}

int32_t graph_table_width(int32_t max_blocks_per_seq, int32_t limit) {
  KVACTOR_ASSERT(max_blocks_per_seq <= limit, "a table wider than the limit");
  int32_t width = 16;
  while (width < max_blocks_per_seq) width *= 2;
  return std::min(width, limit);
}

void pack_batch(const forward_batch& b, std::span<const double> inv_freq,
                const batch_upload_layout& layout, std::span<std::byte> out) {
  KVACTOR_ASSERT(out.size() >= layout.total_bytes, "upload buffer smaller than the layout");
  KVACTOR_ASSERT(reinterpret_cast<std::uintptr_t>(out.data()) % section_alignment == 0,
                 "upload buffer not 16-byte aligned");
  KVACTOR_ASSERT(b.block_tables.size() ==
                     static_cast<std::size_t>(b.num_seqs()) * std::size_t(b.max_blocks_per_seq) &&
                   b.query_start_loc.size() == static_cast<std::size_t>(b.num_seqs()) + 1,
                 "malformed batch");
  KVACTOR_ASSERT(layout.total_bytes == batch_upload_layout::of(b, layout.rope_half,
                                                               layout.table_width)
                                          .total_bytes &&
                   layout.rope_half == static_cast<int32_t>(inv_freq.size()),
                 "layout of another batch");
  put(out, layout.token_ids, b.token_ids);
  put(out, layout.seq_lens, b.seq_lens);
  put(out, layout.query_start_loc, b.query_start_loc);
  put(out, layout.sample_rows, b.sample_rows);
  if (layout.table_width == b.max_blocks_per_seq) {
    put(out, layout.block_tables, b.block_tables);
  } else { // each row padded with zeros
    const auto width = static_cast<std::size_t>(b.max_blocks_per_seq);
    const auto wide = static_cast<std::size_t>(layout.table_width);
    auto* table = reinterpret_cast<int32_t*>(out.data() + layout.block_tables);
    for (std::size_t s = 0; s < static_cast<std::size_t>(b.num_seqs()); ++s) {
      std::copy_n(b.block_tables.data() + s * width, width, table + s * wide);
      std::fill(table + s * wide + width, table + (s + 1) * wide, 0);
    }
  }
  put(out, layout.slot_mapping, b.slot_mapping);
  layers::rope_angles(b.positions, inv_freq, reinterpret_cast<float*>(out.data() + layout.rope_cos),
                      reinterpret_cast<float*>(out.data() + layout.rope_sin));
}

} // namespace kvactor::model
