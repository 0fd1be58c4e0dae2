// The packed layout: where every element goes, stacking, padding, dtypes.
#include <gtest/gtest.h>

#include <vector>

#include "model/forward/packed_matrix.hpp"

namespace kvactor::model {
namespace {

weight_view f32_view(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return weight_view{v.data(), dtype::f32, 2, {rows, cols}, {}};
}

TEST(packed_matrix, element_r_c_is_at_block_column_lane) {
  const int64_t rows = 37, cols = 5;
  std::vector<float> w(size_t(rows * cols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) + 0.5f;
  const packed_matrix p = packed_matrix::pack(std::vector{f32_view(w, rows, cols)}, dtype::f32);
  EXPECT_EQ(p.rows(), rows);
  EXPECT_EQ(p.cols(), cols);
  EXPECT_EQ(p.num_blocks(), 3);
  EXPECT_EQ(p.num_bytes(), size_t(3 * 16 * cols * 4));
  const float* data = p.f32_blocks();
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t l = 0; l < 16; ++l) {
        const int64_t r = 16 * b + l;
        const float want = r < rows ? w[size_t(r * cols + c)] : 0.0f; // padding rows are zeros
        ASSERT_EQ(data[(b * cols + c) * 16 + l], want) << "row " << r << " col " << c;
      }
  EXPECT_EQ(p.f32_blocks(2), data + 2 * 16 * cols);
}

TEST(packed_matrix, parts_stack_their_rows_in_order) {
  const int64_t cols = 3;
  const std::vector<float> a(size_t(10 * cols), 1.0f), b(size_t(7 * cols), 2.0f),
    c(size_t(1 * cols), 3.0f);
  const packed_matrix p = packed_matrix::pack(
    std::vector{f32_view(a, 10, cols), f32_view(b, 7, cols), f32_view(c, 1, cols)}, dtype::f32);
  ASSERT_EQ(p.rows(), 18);
  ASSERT_EQ(p.num_blocks(), 2);
  for (int64_t r = 0; r < 32; ++r) {
    const float want = r < 10 ? 1.0f : r < 17 ? 2.0f : r < 18 ? 3.0f : 0.0f;
    const float got = p.f32_blocks(r / 16)[(cols - 1) * 16 + r % 16];
    EXPECT_EQ(got, want) << "row " << r;
  }
}

TEST(packed_matrix, converts_between_fp32_and_bf16) {
  // 1 + 2^-8 + 2^-10 rounds up to 1 + 2^-7 in bf16; 3.0 is exact
  const std::vector<float> w{1.0f + 0x1p-8f + 0x1p-10f, 3.0f};
  const packed_matrix down = packed_matrix::pack(std::vector{f32_view(w, 2, 1)}, dtype::bf16);
  EXPECT_EQ(down.type(), dtype::bf16);
  EXPECT_EQ(down.bf16_blocks()[0], f32_to_bf16(w[0]));
  EXPECT_EQ(bf16_to_f32(down.bf16_blocks()[0]), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_to_f32(down.bf16_blocks()[1]), 3.0f);
  const std::vector<uint16_t> bits{down.bf16_blocks()[0], down.bf16_blocks()[1]};
  const packed_matrix same =
    packed_matrix::pack(std::vector{weight_view{bits.data(), dtype::bf16, 2, {2, 1}, {}}},
                        dtype::bf16);
  EXPECT_EQ(same.bf16_blocks()[0], bits[0]);
  const packed_matrix up =
    packed_matrix::pack(std::vector{weight_view{bits.data(), dtype::bf16, 2, {2, 1}, {}}},
                        dtype::f32);
  EXPECT_EQ(up.f32_blocks()[0], 1.0f + 0x1p-7f);
  EXPECT_EQ(up.f32_blocks()[1], 3.0f);
}

TEST(packed_matrix, pair_layout_puts_element_r_c_at_block_pair_lane_half) {
  const int64_t rows = 37, cols = 5;
  std::vector<float> w(size_t(rows * cols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) + 1.0f; // exact in bf16 up to 256
  const packed_matrix p = packed_matrix::pack(std::vector{f32_view(w, rows, cols)}, dtype::bf16,
                                              packed_matrix::layout::pairs);
  EXPECT_EQ(p.packing(), packed_matrix::layout::pairs);
  EXPECT_EQ(p.cols(), cols);
  EXPECT_EQ(p.stored_cols(), 32); // padded to one AMX step
  EXPECT_EQ(p.num_bytes(), size_t(3 * 16 * 32 * 2));
  const uint16_t* data = p.bf16_blocks();
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t l = 0; l < 16; ++l) {
        const int64_t r = 16 * b + l;
        // padding rows and columns: zeros
        const float want = r < rows && c < cols ? w[size_t(r * cols + c)] : 0.0f;
        ASSERT_EQ(bf16_to_f32(data[(b * 32 + c - c % 2) * 16 + 2 * l + c % 2]), want)
          << "row " << r << " col " << c;
      }
  EXPECT_EQ(p.bf16_blocks(2), data + 2 * 16 * 32);
  const packed_matrix wide =
    packed_matrix::pack(std::vector{f32_view(std::vector<float>(size_t(2 * 33)), 2, 33)},
                        dtype::bf16, packed_matrix::layout::pairs);
  EXPECT_EQ(wide.stored_cols(), 64);
}

} // namespace
} // namespace kvactor::model
