#pragma once
// Element types of weights on disk and in memory, and exact conversions
// between them.

#include "kernels/dtype.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kvactor::model {

// The element types are the kernels' (f32, f16, bf16); the model adds their
// safetensors names and bulk conversions.
using kernels::dtype;
using kernels::dtype_size;

// The safetensors name: "F32", "F16", "BF16".
std::string_view safetensors_name(dtype t);

// Parses a safetensors dtype name; nullopt when it is not one kvactor loads.
std::optional<dtype> parse_dtype(std::string_view name);

// Bytes per element of any dtype the safetensors format defines (BOOL, U8,
// I64, F8_E4M3, ...), so that unsupported tensors can still be validated;
// nullopt for a name the format does not define.
std::optional<std::size_t> safetensors_dtype_size(std::string_view name);

// Scalar conversions (round to nearest even; NaN stays NaN; f16 overflow gives
// infinity). bf16 is the top half of an fp32: widening is exact.
inline float bf16_to_f32(uint16_t h) { return kernels::detail::bf16_bits_to_float(h); }
inline uint16_t f32_to_bf16(float f) { return kernels::detail::float_to_bf16_bits(f); }
inline float f16_to_f32(uint16_t h) { return kernels::detail::half_bits_to_float(h); }
inline uint16_t f32_to_f16(float f) { return kernels::detail::float_to_half_bits(f); }

// Widens `num` elements of `src` (dtype `from`, any alignment) into `dst`.
void convert_to_f32(const std::byte* src, dtype from, std::span<float> dst);

// Converts into bf16 (copies when `from` is bf16); any source alignment.
void convert_to_bf16(const std::byte* src, dtype from, std::span<uint16_t> dst);

} // namespace kvactor::model
