// The block formats as GGUF lays them out, and quantisation to them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/dtype.hpp"
#include "model/quant/quant_format.hpp"

namespace kvactor::model {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

TEST(quant_format, names_and_sizes_are_the_files) {
  EXPECT_EQ(quant_block_bytes(quant_format::q8_0), 34u);
  EXPECT_EQ(quant_block_bytes(quant_format::q4_0), 18u);
  EXPECT_EQ(quant_row_bytes(quant_format::q4_0, 64), 36u);
  EXPECT_EQ(parse_quant_format("q8_0"), quant_format::q8_0);
  EXPECT_EQ(parse_quant_format("q4_0"), quant_format::q4_0);
  EXPECT_EQ(parse_quant_format("q4_k"), std::nullopt);
}

TEST(quant_format, a_q4_0_block_keeps_the_first_half_in_low_nibbles) {
  // d = 0.5 (fp16 0x3800); qs[0] = 0x2f: value 0 is (15 - 8) d, value 16 is (2 - 8) d.
  std::vector<std::byte> block = bytes_of({0x00, 0x38, 0x2f});
  block.resize(18, std::byte{0x88}); // the rest: nibbles 8, value 0
  std::vector<float> v(32);
  dequantize_row(quant_format::q4_0, block.data(), 32, v.data());
  EXPECT_EQ(v[0], 3.5f);
  EXPECT_EQ(v[16], -3.0f);
  for (int i : {1, 15, 17, 31}) EXPECT_EQ(v[static_cast<std::size_t>(i)], 0.0f);
}

TEST(quant_format, a_q8_0_block_is_its_scale_then_32_signed_bytes) {
  std::vector<std::byte> block = bytes_of({0x00, 0x3c}); // d = 1
  for (int i = 0; i < 32; ++i) block.push_back(static_cast<std::byte>(static_cast<int8_t>(i - 16)));
  std::vector<float> v(32);
  dequantize_row(quant_format::q8_0, block.data(), 32, v.data());
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(v[i], static_cast<float>(i) - 16.0f);
}

// Every value lands on the nearest level of its block: within half a step
// (and the fp16 rounding of the scale), or one step for Q4_0, whose top
// level (7) is one short of the bottom's magnitude (-8); the largest
// magnitude lands on the format's end level.
TEST(quant_format, quantising_rounds_each_value_to_a_nearby_level) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  for (quant_format f : {quant_format::q8_0, quant_format::q4_0}) {
    const int64_t n = 256;
    std::vector<float> x(n), back(n);
    for (float& v : x) v = dist(rng);
    x[5] = 0.3f; // an extreme in block 0
    std::vector<std::byte> blocks(quant_row_bytes(f, n));
    quantize_row(f, x.data(), n, blocks.data());
    dequantize_row(f, blocks.data(), n, back.data());
    for (int64_t b = 0; b < n / 32; ++b) {
      const quant_block q = read_block(f, blocks.data(), b);
      float amax = 0;
      for (int64_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
      const float levels = f == quant_format::q8_0 ? 127.0f : 8.0f;
      EXPECT_NEAR(std::fabs(q.d), amax / levels, amax / levels * 1e-3f) << quant_name(f) << b;
      const float step = f == quant_format::q8_0 ? 0.502f : 1.002f;
      for (int64_t i = 0; i < 32; ++i)
        EXPECT_LE(std::fabs(back[b * 32 + i] - x[b * 32 + i]), std::fabs(q.d) * step)
          << quant_name(f) << " value " << b * 32 + i;
    }
    EXPECT_NEAR(back[5], 0.3f, 0.3f * 1e-3f) << quant_name(f);
  }
}

TEST(quant_format, a_block_of_zeros_has_scale_zero) {
  for (quant_format f : {quant_format::q8_0, quant_format::q4_0}) {
    std::vector<float> x(32, 0.0f), back(32, 1.0f);
    std::vector<std::byte> blocks(quant_row_bytes(f, 32));
    quantize_row(f, x.data(), 32, blocks.data());
    EXPECT_EQ(read_block(f, blocks.data(), 0).d, 0.0f);
    dequantize_row(f, blocks.data(), 32, back.data());
    EXPECT_EQ(back, x);
  }
}

} // namespace
} // namespace kvactor::model
