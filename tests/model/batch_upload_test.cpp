// batch_upload: a step's metadata in one buffer (what the CUDA forward pass
// copies to the device in one go). No device needed.
#include "model/forward/batch_upload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/forward/layers.hpp"

namespace kvactor::model {
namespace {

template <class T>
std::vector<T> read(const std::vector<std::byte>& buf, std::size_t offset, std::size_t n) {
  std::vector<T> v(n);
  if (n > 0) std::memcpy(v.data(), buf.data() + offset, n * sizeof(T));
  return v;
}

// Two prefill chunks (one not sampling) and a decode, block size 4.
forward_batch mixed_batch() {
  static const std::vector<int32_t> ta{1, 2, 3}, tb{4}, tc{5, 6, 7, 8, 9};
  static const std::vector<int32_t> blocks_a{9, 4}, blocks_b{7, 2}, blocks_c{0, 3, 5};
  const std::vector<sequence_chunk> chunks{
    {3, ta, blocks_a, false}, {4, tb, blocks_b, true}, {0, tc, blocks_c, true}};
  return forward_batch::build(chunks, 4);
}

std::vector<double> inv_freq(int half) {
  std::vector<double> f(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i)
    f[static_cast<std::size_t>(i)] = std::pow(10000.0, -2.0 * i / (2.0 * half));
  return f;
}

TEST(batch_upload, sections_are_aligned_and_in_order) {
  const auto l = batch_upload_layout::for_counts(5, 3, 1, 7, 32);
  const std::vector<std::size_t> offsets{l.token_ids,   l.seq_lens,     l.query_start_loc,
                                         l.sample_rows, l.block_tables, l.slot_mapping,
                                         l.rope_cos,    l.rope_sin};
  const std::vector<std::size_t> bytes{5 * 4,     3 * 4, 4 * 4,      1 * 4,
                                       3 * 7 * 4, 5 * 8, 5 * 32 * 4, 5 * 32 * 4};
  EXPECT_EQ(l.token_ids, 0u);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(offsets[i] % 16, 0u) << i;
    const std::size_t end = offsets[i] + bytes[i];
    const std::size_t next = i + 1 < offsets.size() ? offsets[i + 1] : l.total_bytes;
    EXPECT_GE(next, end) << i;
    EXPECT_LT(next - end, 16u) << i; // no more than the padding
  }
  EXPECT_EQ(l.total_bytes % 16, 0u);
}

TEST(batch_upload, the_largest_counts_bound_every_smaller_step) {
  const auto cap = batch_upload_layout::for_counts(64, 8, 8, 10, 64);
  for (int t : {1, 7, 63, 64})
    for (int s : {1, 3, 8})
      for (int w : {0, 1, 9, 10}) {
        const auto l = batch_upload_layout::for_counts(t, s, s, w, 64);
        EXPECT_LE(l.total_bytes, cap.total_bytes) << t << " " << s << " " << w;
        EXPECT_LE(l.rope_sin, cap.rope_sin);
      }
}

TEST(batch_upload, packs_every_array_and_the_rope_angles) {
  const forward_batch b = mixed_batch();
  const std::vector<double> freq = inv_freq(8);
  const auto l = batch_upload_layout::of(b, 8);
  std::vector<std::byte> buf(l.total_bytes + 16, std::byte{0x5a});
  pack_batch(b, freq, l, buf);
  EXPECT_EQ(read<int32_t>(buf, l.token_ids, 9), b.token_ids);
  EXPECT_EQ(read<int32_t>(buf, l.seq_lens, 3), (std::vector<int32_t>{6, 5, 5}));
  EXPECT_EQ(read<int32_t>(buf, l.query_start_loc, 4), (std::vector<int32_t>{0, 3, 4, 9}));
  EXPECT_EQ(read<int32_t>(buf, l.sample_rows, 2), (std::vector<int32_t>{3, 8}));
  EXPECT_EQ(read<int32_t>(buf, l.block_tables, 6), (std::vector<int32_t>{9, 4, 7, 2, 0, 3}));
  EXPECT_EQ(b.max_blocks_per_seq, 2);
  EXPECT_EQ(read<int64_t>(buf, l.slot_mapping, 9), b.slot_mapping);
  std::vector<float> cos(9 * 8), sin(cos.size());
  layers::rope_angles(b.positions, freq, cos.data(), sin.data());
  EXPECT_EQ(read<float>(buf, l.rope_cos, cos.size()), cos); // bit for bit what the CPU path uses
  EXPECT_EQ(read<float>(buf, l.rope_sin, sin.size()), sin);
  EXPECT_EQ(buf[l.total_bytes], std::byte{0x5a}) << "wrote past the layout";
}

TEST(batch_upload, graph_table_widths_are_powers_of_two_within_the_limit) {
  EXPECT_EQ(graph_table_width(1, 512), 16);
  EXPECT_EQ(graph_table_width(16, 512), 16);
  EXPECT_EQ(graph_table_width(17, 512), 32);
  EXPECT_EQ(graph_table_width(300, 512), 512);
  EXPECT_EQ(graph_table_width(300, 400), 400);
  EXPECT_EQ(graph_table_width(3, 8), 8);
}

TEST(batch_upload, wider_tables_are_padded_with_zeros_and_move_what_follows) {
  const forward_batch b = mixed_batch();
  const std::vector<double> freq = inv_freq(8);
  const auto l = batch_upload_layout::of(b, 8, 4);
  EXPECT_EQ(l.table_width, 4);
  EXPECT_EQ(l.total_bytes, batch_upload_layout::for_counts(9, 3, 2, 4, 8).total_bytes);
  EXPECT_GT(l.slot_mapping, batch_upload_layout::of(b, 8).slot_mapping);
  std::vector<std::byte> buf(l.total_bytes, std::byte{0x5a});
  pack_batch(b, freq, l, buf);
  EXPECT_EQ(read<int32_t>(buf, l.block_tables, 12),
            (std::vector<int32_t>{9, 4, 0, 0, 7, 2, 0, 0, 0, 3, 0, 0}));
  EXPECT_EQ(read<int64_t>(buf, l.slot_mapping, 9), b.slot_mapping);
  EXPECT_EQ(read<int32_t>(buf, l.token_ids, 9), b.token_ids);
}

} // namespace
} // namespace kvactor::model
