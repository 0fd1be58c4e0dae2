#pragma once
// Element types of weights on disk and in memory, and exact conversions
// between them.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kvactor::model {

enum class dtype : std::uint8_t { f32, f16, bf16 };

constexpr std::size_t dtype_size(dtype t) { return t == dtype::f32 ? 4 : 2; }

/// The safetensors name: "F32", "F16", "BF16".
std::string_view dtype_name(dtype t);

/// Parses a safetensors dtype name; nullopt when it is not one kvactor loads.
std::optional<dtype> parse_dtype(std::string_view name);

/// Bytes per element of any dtype the safetensors format defines (BOOL, U8,
/// I64, F8_E4M3, ...), so that unsupported tensors can still be validated;
/// nullopt for a name the format does not define.
std::optional<std::size_t> safetensors_dtype_size(std::string_view name);

// bf16 is the top half of an fp32: widening is exact.
inline float bf16_to_f32(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

/// Round to nearest even; NaN stays NaN.
std::uint16_t f32_to_bf16(float f);

float f16_to_f32(std::uint16_t h);

/// Round to nearest even; overflow gives infinity, NaN stays NaN.
std::uint16_t f32_to_f16(float f);

/// Widens `num` elements of `src` (dtype `from`, any alignment) into `dst`.
void convert_to_f32(const std::byte* src, dtype from, std::span<float> dst);

/// Converts into bf16 (copies when `from` is bf16); any source alignment.
void convert_to_bf16(const std::byte* src, dtype from, std::span<std::uint16_t> dst);

} // namespace kvactor::model
