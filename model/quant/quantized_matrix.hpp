#pragma once
// quantized_matrix: a block-quantised weight matrix [rows, cols]
// (quant_format.hpp) repacked for the integer products
// (quant_kernels.hpp): groups of 16 rows; in a group, block by block (32
// columns), the 16 rows' integers interleaved so that one 64-byte vector
// holds 4 columns (Q8_0) or 8 (Q4_0) of all 16 rows, then every block's 16
// scales:
//
//   group g, block b:                                     lane l = row 16 g + l
//     Q8_0: 8 x { lane l: u8 q+128 of columns 4c .. 4c+3 }        c = 0 .. 7
//     Q4_0: 4 x { lane l: byte t = n(col 8v + t) | n(col 8v + 4 + t) << 4 }   v = 0 .. 3
//     Q5_0: Q4_0's 4 vectors of low nibbles, then
//           1 x { lane l: byte t, bit j = the fifth bit of col 4j + t }      j = 0 .. 7
//     Q4_1, Q5_1: as Q4_0, Q5_0
//   then, for every block b: fp16 d[16] (Q4_1, Q5_1: and fp16 m[16])
//
// IQ4_NL as Q4_0 (its nibbles indices into iq4_levels). The K formats
// likewise by super-block (256 columns): Q4_K, Q5_K and IQ4_XS as 8
// sub-blocks of 32 columns laid out as Q4_0's and Q5_0's blocks; Q6_K, Q3_K
// and Q2_K as 16 sub-blocks of 16 columns, their 2-bit fields in vectors of
// { lane l, byte t: bits 2c .. 2c + 1 of column 4c + t } (Q6_K: each
// sub-block 2 vectors of low nibbles as Q4_0's and 1 of top bits; Q3_K: 2
// sub-blocks' vectors of low bits, then 1 of their third bits; Q2_K: 1
// vector each); then every super-block's scales, mins and d as
// quant_isa.hpp lists them.
//
// Groups start 64 bytes apart, so every vector of integers is aligned.
// Integers are kept unsigned (value = d * (u - quant_offset), u =
// quant_unsigned of the stored integer), which is what the CPU's u8 x s8
// dot-product instructions multiply. Rows past the
// last are zeros with scale 0. Packing stacks several matrices of one width
// (q | k | v, gate | up) so that one product computes them all; the bytes
// are about those of the file: 17/16 per value (Q8_0), 9/16 (Q4_0), 5/8
// (Q4_1), 11/16 (Q5_0), 3/4 (Q5_1), 37/64 and 45/64 (Q4_K, Q5_K: their
// 6-bit scales and mins a byte each), 105/128 (Q6_K, as stored), 57/128
// (Q3_K: its 6-bit scales a byte each), 21/64 (Q2_K, as stored), 9/16
// (IQ4_NL), 69/128 (IQ4_XS: its 6-bit scales a byte each).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "model/quant/quant_format.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

class quantized_matrix {
public:
  static constexpr int64_t group_rows = 16;

  // The rows of `parts` one after the other in `format`: parts already in
  // `format` are repacked as they are; fp32 and bf16 parts are quantised
  // row by row (quantize_row). Every part has the same number of columns, a
  // multiple of quant_block_values(format).
  static quantized_matrix pack(std::span<const weight_view> parts, quant_format format);

  // num_bytes() of a matrix of `rows` x `cols` in `format`.
  static std::size_t packed_bytes(quant_format format, int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  quant_format format() const { return format_; }
  int64_t num_groups() const { return (rows_ + group_rows - 1) / group_rows; }
  int64_t blocks_per_row() const;
  // Bytes of one group (16 rows), padded to 64.
  std::size_t group_bytes() const;
  std::size_t num_bytes() const;

  // Group g onwards.
  const uint8_t* groups(int64_t g = 0) const;

  // Row r's values (for tests and references): d * (u - offset), exactly.
  void dequantize_row(int64_t r, float* out) const;

private:
  struct aligned_free {
    void operator()(std::byte* p) const;
  };
  quantized_matrix(int64_t rows, int64_t cols, quant_format format);
  // Stores row r's block b (a file-layout block of `format_`).
  void put_block(int64_t r, int64_t b, const std::byte* block);
  void put_superblock(int64_t r, int64_t b, const std::byte* block);
  // Where block b of group g keeps its integers and its 16 scales (the K
  // formats: its metadata).
  uint8_t* ints(int64_t g, int64_t b) const;
  uint8_t* scales(int64_t g, int64_t b) const;

  int64_t rows_ = 0, cols_ = 0;
  quant_format format_ = quant_format::q8_0;
  std::unique_ptr<std::byte[], aligned_free> data_;
};

} // namespace kvactor::model
