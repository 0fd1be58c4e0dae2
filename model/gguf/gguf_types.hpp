#pragma once
// The tensor types of GGUF files (ggml's `ggml_type`), with the size of
// their blocks.
//
// ggml stores a quantised row as blocks: `block_size` consecutive elements
// packed into `block_bytes` bytes (Q4_K: 256 elements in 144 bytes). A row's
// length must be a multiple of its type's block size; plain types (F32, BF16,
// I32, ...) have blocks of one element. Knowing every type's block lets a
// reader check every tensor's extent even where kvactor cannot compute with
// the type. Ids follow ggml's docs/gguf.md; ids the specification marks as
// removed (4, 5, 31-33, 36-38) are unknown here.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "model/quant/quant_format.hpp"

namespace kvactor::model {

enum class ggml_type : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
};

// The type with this id; nullopt for an id GGUF does not define.
std::optional<ggml_type> ggml_type_from_id(uint32_t id);

// As ggml names it: "F32", "Q4_K", "IQ2_XXS", "BF16".
std::string_view ggml_type_name(ggml_type t);

// Elements per block (1 for plain types).
uint32_t ggml_block_size(ggml_type t);

// Bytes per block.
uint32_t ggml_block_bytes(ggml_type t);

// The bytes of a tensor of `type` and `dims` (dims[0] the row length; no
// dims: one element); nullopt when dims[0] is not a multiple of the block
// size or the count does not fit in 64 bits.
std::optional<uint64_t> ggml_tensor_bytes(ggml_type t, std::span<const uint64_t> dims);

// The block formats kvactor computes with (quant_format), as GGUF types and
// back; nullopt for a type that is not one of them.
ggml_type ggml_type_of(quant_format f);
std::optional<quant_format> quant_format_of(ggml_type t);

// Every type, in id order (for tests and tools).
std::span<const ggml_type> all_ggml_types();

} // namespace kvactor::model
