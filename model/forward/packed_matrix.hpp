#pragma once
// packed_matrix: a weight matrix [rows, cols] in the layout the fixed-order
// products stream (linear_kernels.hpp): blocks of 16 rows, each stored
// column by column, so that at every column k the block's 16 outputs sit
// side by side in one row of 16 values:
//
//   block b, column c, lane l  =  W[16 b + l, c]     at  (b * cols + c) * 16 + l
//
// Rows past the last are zeros. Values are fp32 or bf16 bits. Packing can
// stack several matrices of the same width (q | k | v, gate | up) so that one
// product computes them all.
//
// The pair layout (bf16 only) is what the bf16 dot-product instructions
// read (pair_kernels.hpp: AVX512_BF16's vdpbf16ps, AMX's tdpbf16ps): at
// every pair of columns, the block's 16 outputs side by side, each with its
// two values, the columns zero-padded to a multiple of 32 (one AMX step):
//
//   block b, pair p, lane l, half h  =  W[16 b + l, 2 p + h]
//                                       at  (b * stored_cols + 2 p) * 16 + 2 l + h

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "model/dtype.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

class packed_matrix {
public:
  static constexpr int64_t block_rows = 16;
  // The pair layout's columns are a multiple of this.
  static constexpr int64_t pair_cols_multiple = 32;

  enum class layout { columns, pairs };

  // The rows of `parts` one after the other, in `type` (f32 or bf16):
  // bf16 to f32 widens exactly, f32 to bf16 rounds to nearest even. The
  // pair layout takes bf16 only.
  // parts: rank-2 f32 or bf16 views, all with the same number of columns
  static packed_matrix pack(std::span<const weight_view> parts, dtype type,
                            layout l = layout::columns);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // Columns as stored: cols(), or (pairs) cols() rounded up to pair_cols_multiple.
  int64_t stored_cols() const { return stored_cols_; }
  layout packing() const { return layout_; }
  int64_t num_blocks() const { return (rows_ + block_rows - 1) / block_rows; }
  dtype type() const { return type_; }
  std::size_t num_bytes() const;

  // Block b onwards (fp32 or bf16 bits, as type()).
  const float* f32_blocks(int64_t b = 0) const;
  const uint16_t* bf16_blocks(int64_t b = 0) const;

private:
  struct aligned_free {
    void operator()(std::byte* p) const;
  };
  packed_matrix(int64_t rows, int64_t cols, dtype type, layout l);
  // Where W[16 b + l, c] is stored, in elements.
  int64_t index(int64_t b, int64_t c, int64_t l) const;

  int64_t rows_ = 0, cols_ = 0, stored_cols_ = 0;
  dtype type_ = dtype::f32;
  layout layout_ = layout::columns;
  std::unique_ptr<std::byte[], aligned_free> data_;
};

} // namespace kvactor::model
