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
// IQ4_NL and IQ4_XS keep 4-bit indices into one codebook of 16 levels
// (iq4_levels below) instead of evenly spaced integers:
//
//   IQ4_NL: { fp16 d; uint8 qs[16]; }    value_i = d * iq4_levels[n_i]  18 bytes
//           n_i as Q4_0's
//   IQ4_XS: { fp16 d; uint16 scales_h; uint8 scales_l[4]; uint8 qs[128]; }
//           136 bytes: 8 sub-blocks of 32, 6-bit s_j - 32 (the low 4 bits
//           in scales_l[j / 2] >> 4 (j % 2), the top 2 in bits 2j, 2j + 1 of
//           scales_h); value_i = (d * (s_j - 32)) * iq4_levels[n_i], n_i of
//           sub-block j as Q4_0's of qs[16 j ...]
//
// quantize_row() writes blocks from fp32 values (every weight to the
// nearest value its block can hold, with the scales chosen from the
// extremes of each block or sub-block; IQ4_NL's and IQ4_XS's map the
// largest magnitude to the level -127, IQ4_XS's as nearly as its 6-bit
// sub-block scales allow); dequantize_row() gives a block's
// values back exactly as written above, each product, sum and difference
// rounded once.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kvactor::model {

enum class quant_format : uint8_t {
  q8_0,
  q4_0,
  q4_1,
  q5_0,
  q5_1,
  q2_k,
  q3_k,
  q4_k,
  q5_k,
  q6_k,
  iq4_nl,
  iq4_xs
};

// Every format, in the order above.
std::span<const quant_format> all_quant_formats();

// Values per block: 32, or 256 for the K formats and IQ4_XS.
int64_t quant_block_values(quant_format f);

// The traits the kernels are templated on (compile-time there). `static`:
// each translation unit its own copy (see linear_avx512.cpp on inline code
// built with other flags).
// IQ4_XS counts as a K format: super-blocks of sub-blocks, each with an
// integer scale.
static constexpr bool is_k_format(quant_format f) {
  return f == quant_format::q2_k || f == quant_format::q3_k || f == quant_format::q4_k ||
         f == quant_format::q5_k || f == quant_format::q6_k || f == quant_format::iq4_xs;
}

// Whether a value's integer is an index into iq4_levels (IQ4_NL, IQ4_XS).
static constexpr bool has_codebook(quant_format f) {
  return f == quant_format::iq4_nl || f == quant_format::iq4_xs;
}

// The levels an IQ4_NL or IQ4_XS index stands for (ggml's kvalues_iq4nl).
static constexpr int8_t iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// Bits of a value's stored integer: 8, 4, 4, 5, 5, 2, 3, 4, 5, 6, 4, 4 in the
// order above.
static constexpr int quant_bits(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return 8;
  case quant_format::q4_0:
  case quant_format::q4_1:
  case quant_format::q4_k:
  case quant_format::iq4_nl:
  case quant_format::iq4_xs: return 4;
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

// Values per sub-block of a K format: 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K,
// Q5_K, IQ4_XS).
static constexpr int64_t quant_sub_values(quant_format f) {
  return f == quant_format::q4_k || f == quant_format::q5_k || f == quant_format::iq4_xs ? 32
                                                                                       : 16;
}

// "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
// "iq4_nl", "iq4_xs".
std::string_view quant_name(quant_format f);

// Parses a name as quant_name() writes it; nullopt for any other.
std::optional<quant_format> parse_quant_format(std::string_view name);

// Bytes of one block in the file layout above.
std::size_t quant_block_bytes(quant_format f);

// Bytes of a row of n values (n a multiple of quant_block_values(f)).
std::size_t quant_row_bytes(quant_format f, int64_t n);

// The unsigned integer the kernels multiply for a value, u, stands for
// u - offset: Q8_0's q + 128, Q4_0's and Q5_0's n (offsets 8 and 16), the
// n of Q4_1, Q5_1, Q2_K, Q4_K and Q5_K (offset 0), Q3_K's and Q6_K's n
// (offsets 4 and 32), and for IQ4_NL and IQ4_XS iq4_levels[n] + 128
// (quant_unsigned; offset 128).
static constexpr int32_t quant_offset(quant_format f) {
  switch (f) {
  case quant_format::q8_0:
  case quant_format::iq4_nl:
  case quant_format::iq4_xs: return 128;
  case quant_format::q4_0: return 8;
  case quant_format::q5_0: return 16;
  case quant_format::q3_k: return 4;
  case quant_format::q6_k: return 32;
  default: return 0;
  }
}

// u for an integer n as the repacked matrix stores it (quant_isa.hpp):
// iq4_levels[n] + 128 for the codebook formats, else n itself (Q8_0's
// stored q + 128 too).
static constexpr int32_t quant_unsigned(quant_format f, int32_t n) {
  return has_codebook(f) ? iq4_levels[n] + 128 : n;
}

// x: n values (n a multiple of quant_block_values(f)); out: quant_row_bytes(f, n)
void quantize_row(quant_format f, const float* x, int64_t n, std::byte* out);

// blocks: quant_row_bytes(f, n); out: n values
void dequantize_row(quant_format f, const std::byte* blocks, int64_t n, float* out);

// Block i of a Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL row: its scale and
// min (widened from fp16; the min 0 but for Q4_1 and Q5_1) and its 32
// values as integers (value = d * q[j] + m; IQ4_NL's q its levels).
struct quant_block {
  float d = 0, m = 0;
  int8_t q[32] = {};
};
quant_block read_block(quant_format f, const std::byte* blocks, int64_t i);

// Super-block i of a K-format row, unpacked: value c is
// (d * scale[s]) * (quant_unsigned(f, n[c]) - quant_offset(f)) - dmin * min[s]
// (the min term for has_sub_min formats), s = c / quant_sub_values(f).
struct quant_superblock {
  float d = 0, dmin = 0;
  int32_t scale[16] = {}; // Q2_K: 0 .. 15; Q3_K: -32 .. 31; Q4_K, Q5_K: 0 .. 63
                          // (8 used); Q6_K: -128 .. 127; IQ4_XS: -32 .. 31 (8)
  int32_t min[16] = {};   // Q2_K: 0 .. 15; Q4_K, Q5_K: 0 .. 63 (8 used)
  uint8_t n[256] = {};    // below 2^bits
};
quant_superblock read_superblock(quant_format f, const std::byte* blocks, int64_t i);

} // namespace kvactor::model
