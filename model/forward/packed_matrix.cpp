#include "model/forward/packed_matrix.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "base/assert.hpp"

namespace kvactor::model {

void packed_matrix::aligned_free::operator()(std::byte* p) const { std::free(p); }

packed_matrix::packed_matrix(int64_t rows, int64_t cols, dtype type, layout l)
  : rows_(rows),
    cols_(cols),
    stored_cols_(l == layout::pairs
                   ? (cols + pair_cols_multiple - 1) / pair_cols_multiple * pair_cols_multiple
                   : cols),
    type_(type),
    layout_(l) {
  // NOTE: 64-byte aligned (a cache line, an AVX-512 vector), zero-filled:
  // the padding rows of the last block and the padding columns stay zero.
  const std::size_t bytes = (num_bytes() + 63) / 64 * 64;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, bytes);
}

std::size_t packed_matrix::num_bytes() const {
  return static_cast<std::size_t>(num_blocks() * block_rows * stored_cols_) *
         (type_ == dtype::bf16 ? 2 : 4);
}

int64_t packed_matrix::index(int64_t b, int64_t c, int64_t l) const {
  const int64_t block = b * block_rows * stored_cols_;
  if (layout_ == layout::columns) return block + c * block_rows + l;
  return block + (c - c % 2) * block_rows + 2 * l + c % 2;
}

const float* packed_matrix::f32_blocks(int64_t b) const {
  KVACTOR_ASSERT(type_ == dtype::f32, "packed matrix is not fp32");
  return reinterpret_cast<const float*>(data_.get()) + b * block_rows * stored_cols_;
}

const uint16_t* packed_matrix::bf16_blocks(int64_t b) const {
  KVACTOR_ASSERT(type_ == dtype::bf16, "packed matrix is not bf16");
  return reinterpret_cast<const uint16_t*>(data_.get()) + b * block_rows * stored_cols_;
}

namespace {

// One source row: a view and its row (view null past the last row).
struct source_row {
  const weight_view* view = nullptr;
  int64_t row = 0;
  float at(int64_t c) const {
    const int64_t i = row * view->cols() + c;
    return view->type == dtype::f32 ? view->f32()[i] : bf16_to_f32(view->bf16()[i]);
  }
};

} // namespace

packed_matrix packed_matrix::pack(std::span<const weight_view> parts, dtype type, layout l) {
  KVACTOR_ASSERT(type == dtype::f32 || type == dtype::bf16, "packed matrices are fp32 or bf16");
  KVACTOR_ASSERT(l == layout::columns || type == dtype::bf16, "the pair layout is bf16");
  KVACTOR_ASSERT(!parts.empty(), "nothing to pack");
  const int64_t cols = parts.front().cols();
  std::vector<source_row> sources;
  for (const weight_view& v : parts) {
    KVACTOR_ASSERT(v.rank == 2 && v.cols() == cols, "packed parts are matrices of one width");
    KVACTOR_ASSERT(v.type == dtype::f32 || v.type == dtype::bf16, "packed parts are fp32 or bf16");
    for (int64_t r = 0; r < v.rows(); ++r) sources.push_back({&v, r});
  }
  packed_matrix m(static_cast<int64_t>(sources.size()), cols, type, l);
  sources.resize(static_cast<std::size_t>(m.num_blocks() * block_rows)); // padding rows: no view
  // NOTE: written in about the packed order, read 16 rows at a time.
  auto* f32 = reinterpret_cast<float*>(m.data_.get());
  auto* bf16 = reinterpret_cast<uint16_t*>(m.data_.get());
  for (int64_t b = 0; b < m.num_blocks(); ++b) {
    const source_row* block = sources.data() + b * block_rows;
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t lane = 0; lane < block_rows; ++lane) {
        const source_row& src = block[lane];
        if (src.view == nullptr) continue; // stays zero
        const int64_t out = m.index(b, c, lane);
        if (type == dtype::f32) f32[out] = src.at(c);
        else if (src.view->type == dtype::bf16) bf16[out] = src.view->bf16()[src.row * cols + c];
        else bf16[out] = f32_to_bf16(src.at(c));
      }
  }
  return m;
}

} // namespace kvactor::model
