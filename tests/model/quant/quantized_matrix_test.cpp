// The repacked layout holds exactly the file's blocks, row by row.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "model/quant/quantized_matrix.hpp"

namespace kvactor::model {
namespace {

std::vector<float> random_values(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

weight_view f32_view(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return weight_view{v.data(), dtype::f32, 2, {rows, cols}, {}};
}

TEST(quantized_matrix, stacked_parts_keep_every_rows_blocks) {
  std::mt19937 rng(1);
  for (quant_format f : all_quant_formats()) {
    const int64_t k = 3 * quant_block_values(f);
    const std::vector<float> a = random_values(20 * k, rng), b = random_values(7 * k, rng);
    // b as file blocks, a quantised by pack itself.
    std::vector<std::byte> b_blocks(7 * quant_row_bytes(f, k));
    for (int64_t r = 0; r < 7; ++r)
      quantize_row(f, b.data() + r * k, k, b_blocks.data() + r * quant_row_bytes(f, k));
    const weight_view bq{b_blocks.data(), dtype::f32, 2, {7, k}, f};
    const quantized_matrix m = quantized_matrix::pack(std::vector{f32_view(a, 20, k), bq}, f);
    EXPECT_EQ(m.rows(), 27);
    EXPECT_EQ(m.num_groups(), 2);
    // 3 blocks of 16 rows' integers and scales, padded to 64 bytes; Q3_K's,
    // Q4_K's and Q5_K's 12 bytes of 6-bit scales (and mins) take 16 as
    // bytes, IQ4_XS's 6 bytes 8
    const std::size_t unpacked =
      f == quant_format::q3_k || f == quant_format::q4_k || f == quant_format::q5_k ? 4
      : f == quant_format::iq4_xs                                                    ? 2
                                                                                     : 0;
    EXPECT_EQ(m.group_bytes(), (3 * 16 * (quant_block_bytes(f) + unpacked) + 63) / 64 * 64);
    EXPECT_EQ(m.num_bytes(), 2 * m.group_bytes());
    std::vector<std::byte> row(quant_row_bytes(f, k));
    std::vector<float> want(static_cast<std::size_t>(k)), got(want.size());
    for (int64_t r = 0; r < 27; ++r) {
      const float* src = r < 20 ? a.data() + r * k : b.data() + (r - 20) * k;
      quantize_row(f, src, k, row.data());
      dequantize_row(f, row.data(), k, want.data());
      m.dequantize_row(r, got.data());
      EXPECT_EQ(got, want) << quant_name(f) << " row " << r;
    }
  }
}

TEST(quantized_matrix, bf16_parts_quantise_their_widened_values) {
  std::mt19937 rng(2);
  const int64_t k = 64;
  const std::vector<float> a = random_values(3 * k, rng);
  std::vector<uint16_t> a16(a.size());
  std::vector<float> widened(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a16[i] = f32_to_bf16(a[i]);
    widened[i] = bf16_to_f32(a16[i]);
  }
  const quantized_matrix from16 = quantized_matrix::pack(
    std::vector{weight_view{a16.data(), dtype::bf16, 2, {3, k}, {}}}, quant_format::q8_0);
  const quantized_matrix from32 =
    quantized_matrix::pack(std::vector{f32_view(widened, 3, k)}, quant_format::q8_0);
  std::vector<float> x(static_cast<std::size_t>(k)), y(x.size());
  for (int64_t r = 0; r < 3; ++r) {
    from16.dequantize_row(r, x.data());
    from32.dequantize_row(r, y.data());
    EXPECT_EQ(x, y);
  }
}

} // namespace
} // namespace kvactor::model
