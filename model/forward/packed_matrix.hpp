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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "model/dtype.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

class packed_matrix {
public:
  static constexpr std::int64_t block_rows = 16;

  /// The rows of `parts` one after the other, in `type` (f32 or bf16):
  /// bf16 to f32 widens exactly, f32 to bf16 rounds to nearest even.
  // parts: rank-2 f32 or bf16 views, all with the same number of columns
  static packed_matrix pack(std::span<const weight_view> parts, dtype type);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t num_blocks() const { return (rows_ + block_rows - 1) / block_rows; }
  dtype type() const { return type_; }
  std::size_t num_bytes() const;

  /// Block b onwards (fp32 or bf16 bits, as type()).
  const float* f32_blocks(std::int64_t b = 0) const;
  const std::uint16_t* bf16_blocks(std::int64_t b = 0) const;

private:
  struct aligned_free {
    void operator()(std::byte* p) const;
  };
  packed_matrix(std::int64_t rows, std::int64_t cols, dtype type);

  std::int64_t rows_ = 0, cols_ = 0;
  dtype type_ = dtype::f32;
  std::unique_ptr<std::byte[], aligned_free> data_;
};

} // namespace kvactor::model
