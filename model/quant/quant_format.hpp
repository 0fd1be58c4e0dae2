#pragma once
// The block-quantised weight formats kvactor computes with, as GGUF files
// store them: each row of a matrix is cut into blocks of 32 values, and a
// block keeps one fp16 scale d and 32 small integers q, value = d * q.
//
//   Q8_0: { fp16 d; int8 q[32]; }        value_i = d * q_i           34 bytes
//   Q4_0: { fp16 d; uint8 qs[16]; }      value_i = d * (n_i - 8)     18 bytes
//         n_i = qs[i] & 15 for i < 16, qs[i - 16] >> 4 for i >= 16
//
// quantize_row() writes blocks from fp32 values (every weight to the
// nearest value its block can hold, with the scale chosen from the block's
// largest magnitude); dequantize_row() gives a block's values back exactly
// (d widened from fp16, times an integer: one rounding).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kvactor::model {

enum class quant_format : uint8_t { q8_0, q4_0 };

// Values per block (every format here: 32).
inline constexpr int64_t quant_block_values = 32;

// "q8_0", "q4_0".
std::string_view quant_name(quant_format f);

// Parses a name as quant_name() writes it; nullopt for any other.
std::optional<quant_format> parse_quant_format(std::string_view name);

// Bytes of one block in the file layout above.
std::size_t quant_block_bytes(quant_format f);

// Bytes of a row of n values (n a multiple of quant_block_values).
std::size_t quant_row_bytes(quant_format f, int64_t n);

// The stored integer of each value is n_i - offset: the formats keep it
// unsigned (Q8_0 as q + 128 once repacked, Q4_0 as the nibble n).
int32_t quant_offset(quant_format f);

// x: n values (n a multiple of quant_block_values); out: quant_row_bytes(f, n)
void quantize_row(quant_format f, const float* x, int64_t n, std::byte* out);

// blocks: quant_row_bytes(f, n); out: n values
void dequantize_row(quant_format f, const std::byte* blocks, int64_t n, float* out);

// Block i of a row: its scale (widened from fp16) and its 32 values as
// signed integers (value = d * q[j]).
struct quant_block {
  float d = 0;
  int8_t q[quant_block_values] = {};
};
quant_block read_block(quant_format f, const std::byte* blocks, int64_t i);

} // namespace kvactor::model
