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

constexpr int64_t lanes = quantized_matrix::group_rows;
using layers::byte_at, layers::fifth_bit_at, layers::nibble_at, layers::pair_at,
  layers::quant_position;
using layers::k_scales_at, layers::k_stored, layers::k_sub_at, layers::k_sub_bytes,
  layers::stored_int;

// Lane `lane`'s integer u of column c into a block of 32 (a K format's
// sub-block) of `bits` 8, 4 or 5, as quant_isa.hpp places it.
void put_int(int bits, uint8_t* q, int64_t lane, int64_t c, int32_t u) {
  const quant_position at = bits == 8 ? byte_at(lane, c) : nibble_at(lane, c);
  q[at.byte] = static_cast<uint8_t>(q[at.byte] | (bits == 8 ? u : u & 15) << at.shift);
  if (bits == 5) {
    const quant_position fifth = fifth_bit_at(lane, c);
    q[fifth.byte] = static_cast<uint8_t>(q[fifth.byte] | (u >> 4) << fifth.shift);
  }
}

void put_bits(uint8_t* q, quant_position at, int32_t bits) {
  q[at.byte] = static_cast<uint8_t>(q[at.byte] | bits << at.shift);
}

// Lane `lane`'s integer n of column c into a K-format super-block's
// integers, as quant_isa.hpp's k_stored reads it.
void put_k(quant_format f, uint8_t* ints, int64_t lane, int64_t c, int32_t n) {
  if (quant_sub_values(f) == 32)
    return put_int(quant_bits(f), ints + c / 32 * k_sub_bytes(f), lane, c % 32, n);
  const int64_t k = c / 16;
  uint8_t* sub = ints + k_sub_at(f, k);
  c %= 16;
  if (f == quant_format::q6_k) {
    put_bits(sub, nibble_at(lane, c), n & 15);
    return put_bits(sub + 128, pair_at(lane, c), n >> 4);
  }
  put_bits(sub, pair_at(lane, c), n & 3);
  if (f == quant_format::q3_k) put_bits(ints, layers::third_bit_at(k, lane, c), n >> 2);
}

// Where a K format's super-block keeps its fp16 d (and dmin, 2 bytes on).
std::size_t k_d_at(quant_format f) {
  switch (f) {
  case quant_format::q2_k: return 80;
  case quant_format::q3_k: return 108;
  case quant_format::q6_k: return 208;
  default: return 0;
  }
}

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

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

int64_t quantized_matrix::blocks_per_row() const { return cols_ / quant_block_values(format_); }

std::size_t quantized_matrix::group_bytes() const {
  return packed_bytes(format_, group_rows, cols_);
}

std::size_t quantized_matrix::packed_bytes(quant_format format, int64_t rows, int64_t cols) {
  const int64_t blocks = cols / quant_block_values(format);
  const int bits = quant_bits(format);
  const int64_t group = is_k_format(format)
                          ? layers::k_group_bytes(format, blocks)
                          : layers::quant_group_bytes(bits, has_block_min(format), blocks);
  return static_cast<std::size_t>((rows + group_rows - 1) / group_rows * group);
}

std::size_t quantized_matrix::num_bytes() const {
  return static_cast<std::size_t>(num_groups()) * group_bytes();
}

const uint8_t* quantized_matrix::groups(int64_t g) const { return ints(g, 0); }

uint8_t* quantized_matrix::ints(int64_t g, int64_t b) const {
  const int64_t per_block = is_k_format(format_) ? layers::k_ints_bytes(format_)
                                                 : layers::quant_ints_bytes(quant_bits(format_));
  return reinterpret_cast<uint8_t*>(data_.get()) + static_cast<std::size_t>(g) * group_bytes() +
         b * per_block;
}

uint8_t* quantized_matrix::scales(int64_t g, int64_t b) const {
  const int64_t per_block =
    is_k_format(format_) ? layers::k_meta_bytes(format_)
                         : layers::quant_scales_bytes(has_block_min(format_));
  return ints(g, blocks_per_row()) + b * per_block;
}

void quantized_matrix::put_block(int64_t r, int64_t b, const std::byte* src) {
  const int64_t lane = r % lanes;
  if (is_k_format(format_)) return put_superblock(r, b, src);
  std::memcpy(scales(r / lanes, b) + lane * sizeof(uint16_t), src, sizeof(uint16_t)); // fp16 d
  if (has_block_min(format_)) // fp16 m
    std::memcpy(scales(r / lanes, b) + 32 + lane * sizeof(uint16_t), src + 2, sizeof(uint16_t));
  uint8_t* q = ints(r / lanes, b);
  // NOTE: IQ4_NL's indices are laid out as Q4_0's nibbles, which Q4_0's
  // reader gives back as n - 8.
  const quant_format layout = has_codebook(format_) ? quant_format::q4_0 : format_;
  const quant_block values = read_block(layout, src, 0);
  for (int64_t c = 0; c < 32; ++c)
    put_int(quant_bits(format_), q, lane, c, values.q[c] + quant_offset(layout));
}

void quantized_matrix::put_superblock(int64_t r, int64_t b, const std::byte* src) {
  const int64_t lane = r % lanes;
  const quant_superblock sb = read_superblock(format_, src, 0);
  uint8_t* meta = scales(r / lanes, b);
  uint8_t* q = ints(r / lanes, b);
  const auto* d = reinterpret_cast<const uint8_t*>(src) + k_d_at(format_);
  std::memcpy(meta + 2 * lane, d, 2);
  if (has_sub_min(format_)) std::memcpy(meta + 32 + 2 * lane, d + 2, 2); // dmin
  for (int64_t k = 0; k < layers::k_subs(format_); ++k) {
    uint8_t* scale = meta + k_scales_at(format_) + 16 * k + lane;
    *scale = static_cast<uint8_t>(format_ == quant_format::q2_k ? sb.scale[k] | sb.min[k] << 4
                                                                 : sb.scale[k]);
    if (layers::k_min_bytes(format_))
      meta[layers::k_mins_at + 16 * k + lane] = static_cast<uint8_t>(sb.min[k]);
  }
  for (int64_t c = 0; c < 256; ++c) put_k(format_, q, lane, c, sb.n[c]);
}

quantized_matrix quantized_matrix::pack(std::span<const weight_view> parts, quant_format format) {
  KVACTOR_ASSERT(!parts.empty(), "nothing to pack");
  const int64_t cols = parts.front().cols();
  KVACTOR_ASSERT(cols % quant_block_values(format) == 0, "quantised rows are whole blocks");
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
  const int bits = quant_bits(format_);
  const int64_t values = quant_block_values(format_);
  for (int64_t b = 0; b < blocks_per_row(); ++b) {
    const uint8_t* meta = scales(r / lanes, b);
    const uint8_t* q = ints(r / lanes, b);
    const float d = f16_to_f32(load_u16(meta + 2 * lane));
    for (int64_t c = 0; c < values; ++c) {
      float& v = out[b * values + c];
      if (is_k_format(format_)) {
        const int64_t k = c / quant_sub_values(format_);
        const int32_t scale = layers::k_sub_scale(format_, meta, k, lane);
        const int32_t u = quant_unsigned(format_, k_stored(format_, q, lane, c));
        v = (d * static_cast<float>(scale)) * static_cast<float>(u - offset);
        if (has_sub_min(format_)) {
          const int32_t min = layers::k_sub_min(format_, meta, k, lane);
          v = v - f16_to_f32(load_u16(meta + 32 + 2 * lane)) * static_cast<float>(min);
        }
      } else {
        const int32_t u = quant_unsigned(format_, stored_int(bits, q, lane, c));
        v = d * static_cast<float>(u - offset);
        if (has_block_min(format_)) v = v + f16_to_f32(load_u16(meta + 32 + 2 * lane));
      }
    }
  }
}

} // namespace kvactor::model
