#include "model/quant/quantized_matrix.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "base/assert.hpp"
#include "model/dtype.hpp"
#include "model/quant/quant_isa.hpp"

namespace kvactor::model {
namespace {

constexpr int64_t block = quant_block_values;
constexpr int64_t lanes = quantized_matrix::group_rows;

} // namespace

void quantized_matrix::aligned_free::operator()(std::byte* p) const { std::free(p); }

quantized_matrix::quantized_matrix(int64_t rows, int64_t cols, quant_format format)
  : rows_(rows), cols_(cols), format_(format) {
  // NOTE: 64-byte aligned and zero-filled: padding rows keep scale 0.
  const std::size_t bytes = (num_bytes() + 63) / 64 * 64;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, bytes);
}

std::size_t quantized_matrix::group_bytes() const {
  return static_cast<std::size_t>(
    layers::quant_group_bytes(format_ == quant_format::q4_0, blocks_per_row()));
}

std::size_t quantized_matrix::num_bytes() const {
  return static_cast<std::size_t>(num_groups()) * group_bytes();
}

const uint8_t* quantized_matrix::groups(int64_t g) const { return ints(g, 0); }

uint8_t* quantized_matrix::ints(int64_t g, int64_t b) const {
  const int64_t per_block = layers::quant_ints_bytes(format_ == quant_format::q4_0);
  return reinterpret_cast<uint8_t*>(data_.get()) + static_cast<std::size_t>(g) * group_bytes() +
         b * per_block;
}

uint8_t* quantized_matrix::scales(int64_t g, int64_t b) const {
  return ints(g, blocks_per_row()) + b * layers::quant_scales_bytes;
}

void quantized_matrix::put_block(int64_t r, int64_t b, const std::byte* src) {
  const int64_t lane = r % lanes;
  std::memcpy(scales(r / lanes, b) + lane * sizeof(uint16_t), src, sizeof(uint16_t)); // fp16 d
  uint8_t* q = ints(r / lanes, b);
  const quant_block values = read_block(format_, src, 0);
  const int32_t offset = quant_offset(format_);
  for (int64_t c = 0; c < block; ++c) {
    const auto u = static_cast<uint8_t>(values.q[c] + offset);
    if (format_ == quant_format::q8_0) {
      q[(c / 4 * lanes + lane) * 4 + c % 4] = u; // quad c / 4, lane, byte c % 4
    } else {
      const int64_t v = c / 8, t = c % 4;         // vector v; high nibble for c % 8 >= 4
      uint8_t& byte = q[(v * lanes + lane) * 4 + t];
      byte = static_cast<uint8_t>(byte | (c % 8 < 4 ? u : u << 4));
    }
  }
}

quantized_matrix quantized_matrix::pack(std::span<const weight_view> parts, quant_format format) {
  KVACTOR_ASSERT(!parts.empty(), "nothing to pack");
  const int64_t cols = parts.front().cols();
  KVACTOR_ASSERT(cols % block == 0, "quantised rows are whole blocks of 32 columns");
  int64_t rows = 0;
  for (const weight_view& v : parts) {
    KVACTOR_ASSERT(v.rank == 2 && v.cols() == cols, "packed parts are matrices of one width");
    KVACTOR_ASSERT(!v.quant || *v.quant == format, "a quantised part is in the packed format");
    rows += v.rows();
  }
  quantized_matrix m(rows, cols, format);
  const std::size_t row_bytes = quant_row_bytes(format, cols);
  std::vector<float> values(static_cast<std::size_t>(cols));
  std::vector<std::byte> blocks(row_bytes);
  int64_t r = 0;
  for (const weight_view& v : parts)
    for (int64_t i = 0; i < v.rows(); ++i, ++r) {
      const std::byte* src = nullptr;
      if (v.quant) {
        src = v.blocks() + static_cast<std::size_t>(i) * row_bytes;
      } else {
        for (int64_t c = 0; c < cols; ++c)
          values[static_cast<std::size_t>(c)] =
            v.type == dtype::f32 ? v.f32()[i * cols + c] : bf16_to_f32(v.bf16()[i * cols + c]);
        quantize_row(format, values.data(), cols, blocks.data());
        src = blocks.data();
      }
      for (int64_t b = 0; b < m.blocks_per_row(); ++b)
        m.put_block(r, b, src + static_cast<std::size_t>(b) * quant_block_bytes(format));
    }
  return m;
}

void quantized_matrix::dequantize_row(int64_t r, float* out) const {
  KVACTOR_ASSERT(r >= 0 && r < rows_, "row outside the matrix");
  const int64_t lane = r % lanes;
  const int32_t offset = quant_offset(format_);
  for (int64_t b = 0; b < blocks_per_row(); ++b) {
    uint16_t d16;
    std::memcpy(&d16, scales(r / lanes, b) + lane * sizeof(uint16_t), sizeof d16);
    const float d = f16_to_f32(d16);
    const uint8_t* q = ints(r / lanes, b);
    for (int64_t c = 0; c < block; ++c) {
      int32_t u;
      if (format_ == quant_format::q8_0) {
        u = q[(c / 4 * lanes + lane) * 4 + c % 4];
      } else {
        const uint8_t byte = q[(c / 8 * lanes + lane) * 4 + c % 4];
        u = c % 8 < 4 ? byte & 15 : byte >> 4;
      }
      out[b * block + c] = d * static_cast<float>(u - offset);
    }
  }
}

} // namespace kvactor::model
