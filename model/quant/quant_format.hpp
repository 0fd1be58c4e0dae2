#pragma once
// The block-quantised weight formats kvactor computes with, as GGUF files
// store them. Each row of a matrix is cut into blocks; Q8_0, Q4_0 and Q5_0
// blocks keep 32 values as one fp16 scale d and 32 small integers:
//
//   Q8_0: { fp16 d; int8 q[32]; }        value_i = d * q_i           34 bytes
//   Q4_0: { fp16 d; uint8 qs[16]; }      value_i = d * (n_i - 8)     18 bytes
//         n_i = qs[i] & 15 for i < 16, qs[i - 16] >> 4 for i >= 16
//   Q5_0: { fp16 d; uint8 qh[4]; uint8 qs[16]; }                     22 bytes
//         value_i = d * (n_i - 16), n_i Q4_0's nibble plus 16 times bit i
//         of qh (read as a little-endian uint32)
//   Q4_1: { fp16 d, m; uint8 qs[16]; }   value_i = d * n_i + m       20 bytes
//   Q5_1: { fp16 d, m; uint8 qh[4]; uint8 qs[16]; }                  24 bytes
//         value_i = d * n_i + m, n_i as Q4_0's and Q5_0's
//
// The K formats keep 256 values (a super-block) in sub-blocks, each with an
// integer scale s (and for Q2_K, Q4_K and Q5_K an integer min m) times the
// block's fp16 d (and dmin):
//
//   Q2_K: { uint8 scales[16]; uint8 qs[64]; fp16 d, dmin; }           84 bytes
//         16 sub-blocks of 16, s_k = scales[k] & 15, m_k = scales[k] >> 4;
//         value_i = (d * s_k) * n_i - dmin * m_k, n_i of 2 bits: value
//         128 h + 32 t + l (t, l < 32) in bits 2t, 2t + 1 of qs[32 h + l]
//   Q3_K: { uint8 hmask[32]; uint8 qs[64]; uint8 scales[12]; fp16 d; } 110 bytes
//         16 sub-blocks of 16, 6-bit s_k - 32 (k < 8: the low 4 bits in
//         scales[k] & 15, k >= 8: in scales[k - 8] >> 4; the top 2 in bits
//         2 (k / 4) of scales[8 + k % 4]); value_i = (d * (s_k - 32)) * (n_i - 4),
//         n_i of 3 bits: Q2_K's 2 plus 4 times bit 4h + t of hmask[l]
//   Q4_K: { fp16 d, dmin; uint8 scales[12]; uint8 qs[128]; }        144 bytes
//         8 sub-blocks of 32, 6-bit s_j and m_j packed in `scales` (j < 4:
//         s_j = scales[j] & 63, m_j = scales[j + 4] & 63; j >= 4: the low
//         4 bits in scales[j + 4], the high 2 in the top bits of scales[j - 4]
//         and scales[j]); value_i = (d * s_j) * n_i - dmin * m_j, n_i a
//         nibble: qs[32 c + l] holds values 64 c + l (low) and 64 c + 32 + l
//   Q5_K: { fp16 d, dmin; uint8 scales[12]; uint8 qh[32]; uint8 qs[128]; }
//         176 bytes: Q4_K's values with a fifth bit, n_i plus 16 times bit
//         i / 32 of qh[i % 32]
//   Q6_K: { uint8 ql[128]; uint8 qh[64]; int8 scales[16]; fp16 d; }  210 bytes
//         16 sub-blocks of 16, s_k = scales[k]; value_i = (d * s_k) * (n_i - 32),
//         n_i of 6 bits: value 128 h + 32 t + l (t, l < 32) has its low 4 bits
//         in ql[64 h + 32 (t & 1) + l] (the high nibble for t >= 2) and its
//         top 2 in bits 2t, 2t + 1 of qh[32 h + l]
//
// quantize_row() writes blocks from fp32 values (every weight to the
// nearest value its block can hold, with the scales chosen from the
// extremes of each block or sub-block); dequantize_row() gives a block's
// values back exactly as written above, each product, sum and difference
// rounded once.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kvactor::model {

enum class quant_format : uint8_t { q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k };

// Every format, in the order above.
std::span<const quant_format> all_quant_formats();

// Values per block: 32, or 256 for the K formats.
int64_t quant_block_values(quant_format f);

// The traits the kernels are templated on (compile-time there). `static`:
// each translation unit its own copy (see linear_avx512.cpp on inline code
// built with other flags).
static constexpr bool is_k_format(quant_format f) {
  return f == quant_format::q2_k || f == quant_format::q3_k || f == quant_format::q4_k ||
         f == quant_format::q5_k || f == quant_format::q6_k;
}

// Bits of a value's stored integer: 8, 4, 4, 5, 5, 2, 3, 4, 5, 6 in the order
// above.
static constexpr int quant_bits(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return 8;
  case quant_format::q4_0:
  case quant_format::q4_1:
  case quant_format::q4_k: return 4;
  case quant_format::q5_0:
  case quant_format::q5_1:
  case quant_format::q5_k: return 5;
  case quant_format::q6_k: return 6;
  case quant_format::q2_k: return 2;
  case quant_format::q3_k: return 3;
  }
  return 0;
}

// Whether a block of 32 has a min (Q4_1, Q5_1).
static constexpr bool has_block_min(quant_format f) {
  return f == quant_format::q4_1 || f == quant_format::q5_1;
}

// Whether a K format's sub-blocks have a min (Q2_K, Q4_K, Q5_K).
static constexpr bool has_sub_min(quant_format f) {
  return f == quant_format::q2_k || f == quant_format::q4_k || f == quant_format::q5_k;
}

// Values per sub-block of a K format: 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K).
static constexpr int64_t quant_sub_values(quant_format f) {
  return f == quant_format::q4_k || f == quant_format::q5_k ? 32 : 16;
}

// "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k".
std::string_view quant_name(quant_format f);

// Parses a name as quant_name() writes it; nullopt for any other.
std::optional<quant_format> parse_quant_format(std::string_view name);

// Bytes of one block in the file layout above.
std::size_t quant_block_bytes(quant_format f);

// Bytes of a row of n values (n a multiple of quant_block_values(f)).
std::size_t quant_row_bytes(quant_format f, int64_t n);

// The stored integer of each value is n_i - offset: the formats keep it
// unsigned (Q8_0 as q + 128 once repacked, Q4_0 and Q5_0 as n, offsets 8
// and 16; Q4_1's, Q5_1's, Q2_K's, Q4_K's and Q5_K's n have offset 0, Q3_K's
// 4, Q6_K's 32).
static constexpr int32_t quant_offset(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return 128;
  case quant_format::q4_0: return 8;
  case quant_format::q5_0: return 16;
  case quant_format::q3_k: return 4;
  case quant_format::q6_k: return 32;
  default: return 0;
  }
}

// x: n values (n a multiple of quant_block_values(f)); out: quant_row_bytes(f, n)
void quantize_row(quant_format f, const float* x, int64_t n, std::byte* out);

// blocks: quant_row_bytes(f, n); out: n values
void dequantize_row(quant_format f, const std::byte* blocks, int64_t n, float* out);

// Block i of a Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1 row: its scale and min
// (widened from fp16; the min 0 but for Q4_1 and Q5_1) and its 32 values as
// integers (value = d * q[j] + m).
struct quant_block {
  float d = 0, m = 0;
  int8_t q[32] = {};
};
quant_block read_block(quant_format f, const std::byte* blocks, int64_t i);

// Super-block i of a K-format row, unpacked: value c is
// (d * scale[s]) * (n[c] - quant_offset(f)) - dmin * min[s] (the min term
// for has_sub_min formats), s = c / quant_sub_values(f).
struct quant_superblock {
  float d = 0, dmin = 0;
  int32_t scale[16] = {}; // Q2_K: 0 .. 15; Q3_K: -32 .. 31; Q4_K, Q5_K: 0 .. 63
                          // (8 used); Q6_K: -128 .. 127
  int32_t min[16] = {};   // Q2_K: 0 .. 15; Q4_K, Q5_K: 0 .. 63 (8 used)
  uint8_t n[256] = {};    // below 2^bits
};
quant_superblock read_superblock(quant_format f, const std::byte* blocks, int64_t i);

} // namespace kvactor::model
