// The block formats as GGUF lays them out, and quantisation to them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
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
  EXPECT_EQ(quant_block_bytes(quant_format::q4_k), 144u);
  EXPECT_EQ(quant_block_bytes(quant_format::q6_k), 210u);
  EXPECT_EQ(quant_row_bytes(quant_format::q6_k, 512), 420u);
  EXPECT_EQ(quant_block_values(quant_format::q4_0), 32);
  EXPECT_EQ(quant_block_values(quant_format::q4_k), 256);
  EXPECT_EQ(parse_quant_format("q4_k"), quant_format::q4_k);
  EXPECT_EQ(parse_quant_format("q6_k"), quant_format::q6_k);
  EXPECT_EQ(quant_block_bytes(quant_format::q5_0), 22u);
  EXPECT_EQ(quant_block_bytes(quant_format::q5_k), 176u);
  EXPECT_EQ(quant_row_bytes(quant_format::q5_k, 512), 352u);
  for (quant_format f : all_quant_formats()) EXPECT_EQ(parse_quant_format(quant_name(f)), f);
  EXPECT_EQ(parse_quant_format("q5_k"), quant_format::q5_k);
  EXPECT_EQ(parse_quant_format("q3_k"), quant_format::q3_k);
  EXPECT_EQ(parse_quant_format("iq4_xs"), quant_format::iq4_xs);
  EXPECT_EQ(parse_quant_format("iq4_nl"), quant_format::iq4_nl);
  EXPECT_EQ(quant_block_bytes(quant_format::iq4_nl), 18u);
  EXPECT_EQ(quant_block_bytes(quant_format::iq4_xs), 136u);
  EXPECT_EQ(quant_block_values(quant_format::iq4_nl), 32);
  EXPECT_EQ(quant_block_values(quant_format::iq4_xs), 256);
  EXPECT_EQ(parse_quant_format("iq3_s"), std::nullopt);
  EXPECT_EQ(quant_block_bytes(quant_format::q4_1), 20u);
  EXPECT_EQ(quant_block_bytes(quant_format::q5_1), 24u);
  EXPECT_EQ(quant_block_bytes(quant_format::q2_k), 84u);
  EXPECT_EQ(quant_block_bytes(quant_format::q3_k), 110u);
  EXPECT_EQ(parse_quant_format("q8_1"), std::nullopt);
}

// A Q4_K or Q5_K block of `bytes`, zeros but for its head: d = 1,
// dmin = 0.5; s_0 = 2, m_0 = 3; s_5 = 40, m_5 = 33 (their top two bits in
// scales[1] and scales[5], the low four in scales[9]).
std::vector<std::byte> k_block(std::size_t bytes) {
  std::vector<std::byte> block(bytes, std::byte{0});
  const std::vector<std::byte> head =
    bytes_of({0x00, 0x3c, 0x00, 0x38, 2, 0x80, 0, 0, 3, 0x80, 0, 0, 0, 0x18, 0, 0});
  std::copy(head.begin(), head.end(), block.begin());
  return block;
}

TEST(quant_format, a_q4_k_block_unpacks_its_six_bit_scales_and_mins) {
  std::vector<std::byte> block = k_block(144);
  block[16] = std::byte{0x5a};      // value 0: nibble 10; value 32: nibble 5 (sub-block 1)
  block[16 + 65] = std::byte{0x70}; // value 129: nibble 0; value 161 (sub-block 5): 7
  const quant_superblock sb = read_superblock(quant_format::q4_k, block.data(), 0);
  EXPECT_EQ(sb.scale[0], 2);
  EXPECT_EQ(sb.min[0], 3);
  EXPECT_EQ(sb.scale[5], 40);
  EXPECT_EQ(sb.min[5], 33);
  std::vector<float> v(256);
  dequantize_row(quant_format::q4_k, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 2.0f * 10.0f - 1.5f);
  EXPECT_EQ(v[1], -1.5f); // nibble 0, sub-block 0's min
  EXPECT_EQ(v[32], 0.0f);
  EXPECT_EQ(v[161], 40.0f * 7.0f - 16.5f);
  EXPECT_EQ(v[160], -16.5f);
  EXPECT_EQ(v[129], 0.0f);
}

TEST(quant_format, a_q6_k_block_joins_low_nibbles_and_top_bits) {
  std::vector<std::byte> block(210, std::byte{0});
  block[208] = std::byte{0x00}, block[209] = std::byte{0x38};       // d = 0.5
  block[192] = std::byte{3};                                        // s_0
  block[192 + 5] = static_cast<std::byte>(static_cast<int8_t>(-2)); // s_5
  block[0] = std::byte{0x0f};                                       // value 0: low bits 15
  block[128] = std::byte{0x02};                                     // value 0: top bits 2, n = 47
  block[16] = std::byte{0x50}; // value 80 (t = 2, l = 16): low bits 5 in the high nibble
  const quant_superblock sb = read_superblock(quant_format::q6_k, block.data(), 0);
  EXPECT_EQ(sb.n[0], 47);
  EXPECT_EQ(sb.n[80], 5);
  EXPECT_EQ(sb.scale[5], -2);
  std::vector<float> v(256);
  dequantize_row(quant_format::q6_k, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 1.5f * 15.0f);
  EXPECT_EQ(v[1], 1.5f * -32.0f);
  EXPECT_EQ(v[80], -1.0f * -27.0f);
  EXPECT_EQ(v[81], 32.0f);
  EXPECT_EQ(v[64], 0.0f); // sub-block 4: scale 0
}

// Q2_K: scales[16] (scale | min << 4), qs[64], d, dmin; value 128 h + 32 t
// + l in bits 2t of qs[32 h + l].
TEST(quant_format, a_q2_k_block_packs_four_values_a_byte) {
  std::vector<std::byte> block(84, std::byte{0});
  block[80] = std::byte{0x00}, block[81] = std::byte{0x38}; // d = 0.5
  block[82] = std::byte{0x00}, block[83] = std::byte{0x3c}; // dmin = 1
  block[0] = std::byte{0x23};                               // s_0 = 3, m_0 = 2
  block[13] = std::byte{0x5f};                              // s_13 = 15, m_13 = 5
  block[16] = std::byte{0x03 | 0x02 << 6}; // value 0: 3; value 96 (t = 3): 2
  block[16 + 32 + 17] = std::byte{0x01 << 4}; // value 128 + 64 + 17 = 209 (sub-block 13): 1
  const quant_superblock sb = read_superblock(quant_format::q2_k, block.data(), 0);
  EXPECT_EQ(sb.scale[13], 15);
  EXPECT_EQ(sb.min[13], 5);
  EXPECT_EQ(sb.n[0], 3);
  EXPECT_EQ(sb.n[96], 2);
  EXPECT_EQ(sb.n[209], 1);
  std::vector<float> v(256);
  dequantize_row(quant_format::q2_k, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 1.5f * 3.0f - 2.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[96], 0.0f); // sub-block 6: scale and min 0
  EXPECT_EQ(v[209], 7.5f * 1.0f - 5.0f);
  EXPECT_EQ(v[208], -5.0f);
}

// Q3_K: hmask[32], qs[64], 12 bytes of 6-bit scales (stored + 32), d; a
// value's third bit in bit 4h + t of hmask[l].
TEST(quant_format, a_q3_k_block_joins_two_low_bits_and_a_third) {
  std::vector<std::byte> block(110, std::byte{0});
  block[108] = std::byte{0x00}, block[109] = std::byte{0x38}; // d = 0.5
  // s_0 = 35 - 32 = 3: low bits 3 in scales[0], top 2 (2) in bits 0, 1 of
  // scales[8]; s_13 = 10 - 32 = -22: low 10 in the high nibble of
  // scales[5], top 0 in bits 6, 7 of scales[9].
  block[96 + 0] = std::byte{0x03};
  block[96 + 8] = std::byte{0x02};
  block[96 + 5] = std::byte{0xa0};
  block[32 + 0] = std::byte{0x01};       // value 0: low bits 1
  block[0] = std::byte{0x01};            // value 0: third bit set, n = 5
  block[32 + 32 + 17] = std::byte{0x02 << 4}; // value 209 (h 1, t 2): low bits 2
  block[17] = std::byte{0x01 << 6};           // its third bit (4h + t = 6)
  const quant_superblock sb = read_superblock(quant_format::q3_k, block.data(), 0);
  EXPECT_EQ(sb.scale[0], 3);
  EXPECT_EQ(sb.scale[13], -22);
  EXPECT_EQ(sb.scale[1], -32);
  EXPECT_EQ(sb.n[0], 5);
  EXPECT_EQ(sb.n[209], 6);
  std::vector<float> v(256);
  dequantize_row(quant_format::q3_k, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 1.5f * 1.0f);   // n - 4 = 1
  EXPECT_EQ(v[1], 1.5f * -4.0f);  // n = 0
  EXPECT_EQ(v[209], -11.0f * 2.0f);
  EXPECT_EQ(v[16], -16.0f * -4.0f); // sub-block 1: scale -32
}

// IQ4_NL: d, then Q4_0's nibbles, each an index into the levels -127,
// -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113.
TEST(quant_format, an_iq4_nl_block_maps_its_nibbles_to_the_codebook) {
  // d = 0.5; qs[0] = 0x2f: value 0 is level 15 (113), value 16 level 2 (-83).
  std::vector<std::byte> block = bytes_of({0x00, 0x38, 0x2f});
  block.resize(18, std::byte{0x88}); // the rest: level 8 (1)
  const quant_block q = read_block(quant_format::iq4_nl, block.data(), 0);
  EXPECT_EQ(q.q[0], 113);
  EXPECT_EQ(q.q[16], -83);
  EXPECT_EQ(q.q[1], 1);
  std::vector<float> v(32);
  dequantize_row(quant_format::iq4_nl, block.data(), 32, v.data());
  EXPECT_EQ(v[0], 56.5f);
  EXPECT_EQ(v[16], -41.5f);
  EXPECT_EQ(v[31], 0.5f);
}

// IQ4_XS: d, scales_h (the top 2 bits of sub-block j's scale + 32 in bits
// 2j), scales_l[4] (the low 4 in nibble j % 2 of byte j / 2), then per
// sub-block of 32 16 bytes of nibbles as IQ4_NL's.
TEST(quant_format, an_iq4_xs_block_joins_its_scales_and_maps_its_nibbles) {
  std::vector<std::byte> block(136, std::byte{0});
  block[0] = std::byte{0x00}, block[1] = std::byte{0x38}; // d = 0.5
  // s_0 = 35 - 32 = 3 (low 3, top 2); s_5 = 10 - 32 = -22 (low 10, top 0);
  // s_7 = 63 - 32 = 31 (low 15, top 3, bits 14 and 15).
  block[2] = std::byte{0x02}, block[3] = std::byte{0xc0};
  block[4 + 0] = std::byte{0x03};
  block[4 + 2] = std::byte{0xa0};
  block[4 + 3] = std::byte{0xf0};
  block[8 + 0] = std::byte{0x2f};          // value 0: level 15; value 16: level 2
  block[8 + 16 * 5 + 3] = std::byte{0x09}; // value 163: level 9; value 179: level 0
  const quant_superblock sb = read_superblock(quant_format::iq4_xs, block.data(), 0);
  EXPECT_EQ(sb.scale[0], 3);
  EXPECT_EQ(sb.scale[1], -32);
  EXPECT_EQ(sb.scale[5], -22);
  EXPECT_EQ(sb.scale[7], 31);
  EXPECT_EQ(sb.n[0], 15);
  EXPECT_EQ(sb.n[16], 2);
  EXPECT_EQ(sb.n[163], 9);
  EXPECT_EQ(sb.n[179], 0);
  std::vector<float> v(256);
  dequantize_row(quant_format::iq4_xs, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 1.5f * 113.0f);
  EXPECT_EQ(v[16], 1.5f * -83.0f);
  EXPECT_EQ(v[1], 1.5f * -127.0f);
  EXPECT_EQ(v[163], -11.0f * 13.0f);
  EXPECT_EQ(v[179], -11.0f * -127.0f);
  EXPECT_EQ(v[255], 15.5f * -127.0f);
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

TEST(quant_format, a_q5_0_block_takes_value_i_s_fifth_bit_from_bit_i_of_qh) {
  // d = 0.5; qh = 0x00010001 (little-endian): values 0 and 16 get 16 added;
  // qs[0] = 0x2f: value 0 is (15 + 16 - 16) d, value 16 is (2 + 16 - 16) d;
  // qs[1] = 0x2f without fifth bits: value 1 is (15 - 16) d, value 17 (2 - 16) d.
  std::vector<std::byte> block = bytes_of({0x00, 0x38, 0x01, 0x00, 0x01, 0x00, 0x2f, 0x2f});
  block.resize(22, std::byte{0x00}); // the rest: 0 - 16
  block[5] = std::byte{0x80};        // bit 31: value 31 is (0 + 16 - 16) d
  const quant_block q = read_block(quant_format::q5_0, block.data(), 0);
  EXPECT_EQ(q.q[0], 15);
  EXPECT_EQ(q.q[16], 2);
  EXPECT_EQ(q.q[1], -1);
  EXPECT_EQ(q.q[17], -14);
  EXPECT_EQ(q.q[31], 0);
  std::vector<float> v(32);
  dequantize_row(quant_format::q5_0, block.data(), 32, v.data());
  EXPECT_EQ(v[0], 7.5f);
  EXPECT_EQ(v[17], -7.0f);
  EXPECT_EQ(v[2], -8.0f);
  EXPECT_EQ(v[31], 0.0f);
}

TEST(quant_format, a_q5_k_block_takes_value_i_s_fifth_bit_from_bit_i_over_32_of_qh) {
  // Q4_K's head, then qh[32], then the nibbles.
  std::vector<std::byte> block = k_block(176);
  block[16 + 0] = std::byte{0x01};  // value 0 (bit 0 of qh[0]): + 16
  block[16 + 1] = std::byte{0x20};  // value 161 = 5 * 32 + 1 (bit 5 of qh[1]): + 16
  block[48] = std::byte{0x5a};      // value 0: nibble 10; value 32: nibble 5
  block[48 + 65] = std::byte{0x70}; // value 161: nibble 7
  const quant_superblock sb = read_superblock(quant_format::q5_k, block.data(), 0);
  EXPECT_EQ(sb.n[0], 26);
  EXPECT_EQ(sb.n[32], 5);
  EXPECT_EQ(sb.n[161], 23);
  EXPECT_EQ(sb.n[129], 0);
  EXPECT_EQ(sb.scale[5], 40);
  EXPECT_EQ(sb.min[5], 33);
  std::vector<float> v(256);
  dequantize_row(quant_format::q5_k, block.data(), 256, v.data());
  EXPECT_EQ(v[0], 2.0f * 26.0f - 1.5f);
  EXPECT_EQ(v[1], -1.5f);
  EXPECT_EQ(v[161], 40.0f * 23.0f - 16.5f);
  EXPECT_EQ(v[160], -16.5f);
}

TEST(quant_format, q4_1_and_q5_1_blocks_add_their_min) {
  // d = 0.5, m = -2; Q4_1: qs[0] = 0x2f, value 0 is 15 d + m, value 16 is
  // 2 d + m. Q5_1: the same nibbles, qh = bit 16: value 16 is (2 + 16) d + m.
  std::vector<std::byte> q4 = bytes_of({0x00, 0x38, 0x00, 0xc0, 0x2f});
  q4.resize(20, std::byte{0x00});
  std::vector<float> v(32);
  dequantize_row(quant_format::q4_1, q4.data(), 32, v.data());
  EXPECT_EQ(v[0], 5.5f);
  EXPECT_EQ(v[16], -1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(read_block(quant_format::q4_1, q4.data(), 0).m, -2.0f);
  std::vector<std::byte> q5 = bytes_of({0x00, 0x38, 0x00, 0xc0, 0x00, 0x00, 0x01, 0x00, 0x2f});
  q5.resize(24, std::byte{0x00});
  dequantize_row(quant_format::q5_1, q5.data(), 32, v.data());
  EXPECT_EQ(v[0], 5.5f);
  EXPECT_EQ(v[16], 7.0f);
  EXPECT_EQ(v[17], -2.0f);
  EXPECT_EQ(read_block(quant_format::q5_1, q5.data(), 0).q[16], 18);
}

TEST(quant_format, a_q8_0_block_is_its_scale_then_32_signed_bytes) {
  std::vector<std::byte> block = bytes_of({0x00, 0x3c}); // d = 1
  for (int i = 0; i < 32; ++i) block.push_back(static_cast<std::byte>(static_cast<int8_t>(i - 16)));
  std::vector<float> v(32);
  dequantize_row(quant_format::q8_0, block.data(), 32, v.data());
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(v[i], static_cast<float>(i) - 16.0f);
}

// Every value lands on the nearest level of its block: within half a step
// (and the fp16 rounding of the scale), or one step for Q4_0 and Q5_0,
// whose top level (7, 15) is one short of the bottom's magnitude (-8, -16);
// the largest magnitude lands on the format's end level.
TEST(quant_format, quantising_rounds_each_value_to_a_nearby_level) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  for (quant_format f : {quant_format::q8_0, quant_format::q4_0, quant_format::q5_0}) {
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
      const float levels =
        f == quant_format::q8_0 ? 127.0f : f == quant_format::q5_0 ? 16.0f : 8.0f;
      EXPECT_NEAR(std::fabs(q.d), amax / levels, amax / levels * 1e-3f) << quant_name(f) << b;
      const float step = f == quant_format::q8_0 ? 0.502f : 1.002f;
      for (int64_t i = 0; i < 32; ++i)
        EXPECT_LE(std::fabs(back[b * 32 + i] - x[b * 32 + i]), std::fabs(q.d) * step)
          << quant_name(f) << " value " << b * 32 + i;
    }
    EXPECT_NEAR(back[5], 0.3f, 0.3f * 1e-3f) << quant_name(f);
  }
}

// Q4_1 and Q5_1: the block's range over 15 (31) steps from its min; each
// value within half a step, plus what rounding the min and the step to
// fp16 moves (the step's error times at most 31 levels).
TEST(quant_format, blocks_with_a_min_round_each_value_to_a_nearby_level) {
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.05f, 0.02f); // mostly positive: the min matters
  for (quant_format f : {quant_format::q4_1, quant_format::q5_1}) {
    const int64_t n = 256;
    const float top = f == quant_format::q4_1 ? 15.0f : 31.0f;
    std::vector<float> x(n), back(n);
    for (float& v : x) v = dist(rng);
    std::vector<std::byte> blocks(quant_row_bytes(f, n));
    quantize_row(f, x.data(), n, blocks.data());
    dequantize_row(f, blocks.data(), n, back.data());
    for (int64_t b = 0; b < n / 32; ++b) {
      const quant_block q = read_block(f, blocks.data(), b);
      float lo = x[b * 32], hi = lo;
      for (int64_t i = 0; i < 32; ++i)
        lo = std::min(lo, x[b * 32 + i]), hi = std::max(hi, x[b * 32 + i]);
      EXPECT_NEAR(q.m, lo, std::fabs(lo) * 1e-3f) << quant_name(f) << b;
      EXPECT_NEAR(q.d, (hi - lo) / top, (hi - lo) / top * 1e-3f) << quant_name(f) << b;
      const float bound = 0.502f * q.d + std::fabs(q.m - lo) + top * q.d * 1e-3f;
      for (int64_t i = 0; i < 32; ++i)
        EXPECT_LE(std::fabs(back[b * 32 + i] - x[b * 32 + i]), bound)
          << quant_name(f) << " value " << b * 32 + i;
    }
  }
}

// 512 values (normal, sd 0.02, with the extremes 0.25 at 40 and -0.3 at
// 300) quantised to f and back, and the relative L2 error of the round trip.
struct round_trip {
  static constexpr int64_t n = 512;
  std::vector<float> x, back;
  std::vector<std::byte> blocks;
  round_trip(quant_format f, std::mt19937& rng)
    : x(n), back(n), blocks(quant_row_bytes(f, n)) {
    std::normal_distribution<float> dist(0.0f, 0.02f);
    for (float& v : x) v = dist(rng);
    x[40] = 0.25f;
    x[300] = -0.3f;
    quantize_row(f, x.data(), n, blocks.data());
    dequantize_row(f, blocks.data(), n, back.data());
  }
  double relative_error() const {
    double err2 = 0, norm2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      err2 += (back[i] - x[i]) * (back[i] - x[i]);
      norm2 += x[i] * x[i];
    }
    return std::sqrt(err2 / norm2);
  }
};

// Each value lands within half a step of its sub-block, plus what rounding
// the sub-blocks' steps (and Q4_K's and Q5_K's mins) to integers of d
// (dmin) can move the ends of their ranges (half a d per level).
TEST(quant_format, k_formats_round_each_value_to_a_nearby_level) {
  std::mt19937 rng(5);
  for (quant_format f : {quant_format::q2_k, quant_format::q3_k, quant_format::q4_k,
                         quant_format::q5_k, quant_format::q6_k}) {
    const round_trip r(f, rng);
    const int64_t sub = quant_sub_values(f);
    for (int64_t i = 0; i < r.n; ++i) {
      const quant_superblock q = read_superblock(f, r.blocks.data(), i / 256);
      const float step = std::fabs(q.d * static_cast<float>(q.scale[i % 256 / sub]));
      // the top level (the largest magnitude for Q3_K's and Q6_K's
      // symmetric levels), half a d off for each
      const float levels = static_cast<float>((1 << quant_bits(f)) - 1);
      const float bound = has_sub_min(f)
                            ? 0.502f * step + (levels / 2 + 0.01f) * q.d + 0.51f * q.dmin
                            : 0.502f * step + ((levels + 1) / 4 + 0.01f) * q.d;
      EXPECT_LE(std::fabs(r.back[i] - r.x[i]), bound) << quant_name(f) << " value " << i;
    }
    const double relative = r.relative_error();
    const double limit[] = {0.6, 0.3, 0.15, 0.08, 0.04}; // Q2_K .. Q6_K
    EXPECT_LT(relative, limit[quant_bits(f) - 2]) << quant_name(f);
    RecordProperty(std::string(quant_name(f)) + "_relative_error", std::to_string(relative));
  }
}

// IQ4_NL and IQ4_XS: each value within 14 of its steps (half the widest
// gap between two neighbouring levels is 12, and a value of the sign
// opposite the largest magnitude's may be 127 steps out, against the top
// level 113), plus, for IQ4_XS, what rounding the sub-block's step to an
// integer of d moves its widest level (half a d times 127); the largest
// magnitude of an IQ4_NL block lands on the level -127.
TEST(quant_format, codebook_formats_round_each_value_to_a_nearby_level) {
  std::mt19937 rng(6);
  for (quant_format f : {quant_format::iq4_nl, quant_format::iq4_xs}) {
    const round_trip r(f, rng);
    for (int64_t i = 0; i < r.n; ++i) {
      float step = 0, slack = 0;
      if (f == quant_format::iq4_nl) {
        step = std::fabs(read_block(f, r.blocks.data(), i / 32).d);
      } else {
        const quant_superblock q = read_superblock(f, r.blocks.data(), i / 256);
        step = std::fabs(q.d * static_cast<float>(q.scale[i % 256 / 32]));
        slack = 63.51f * q.d;
      }
      EXPECT_LE(std::fabs(r.back[i] - r.x[i]), 14.01f * step + slack) << quant_name(f) << i;
    }
    if (f == quant_format::iq4_nl) {
      EXPECT_NEAR(r.back[40], 0.25f, 0.25f * 1e-3f);
      EXPECT_NEAR(r.back[300], -0.3f, 0.3f * 1e-3f);
    }
    const double relative = r.relative_error();
    EXPECT_LT(relative, 0.15) << quant_name(f);
    RecordProperty(std::string(quant_name(f)) + "_relative_error", std::to_string(relative));
  }
}

TEST(quant_format, a_block_of_zeros_has_scale_zero) {
  for (quant_format f :
       {quant_format::q8_0, quant_format::q4_0, quant_format::q5_0, quant_format::iq4_nl}) {
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
