#include "model/dtype.hpp"

#include <cstring>

namespace kvactor::model {

std::string_view dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::f16: return "F16";
    case dtype::bf16: return "BF16";
  }
  return "?";
}

std::optional<dtype> parse_dtype(std::string_view name) {
  if (name == "F32") return dtype::f32;
  if (name == "F16") return dtype::f16;
  if (name == "BF16") return dtype::bf16;
  return std::nullopt;
}

std::optional<std::size_t> safetensors_dtype_size(std::string_view name) {
  struct entry {
    std::string_view name;
    std::size_t size;
  };
  static constexpr entry table[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"F64", 8},  {"I64", 8}, {"U64", 8},
  };
  for (const auto& e : table)
    if (e.name == name) return e.size;
  return std::nullopt;
}

std::uint16_t f32_to_bf16(float f) {
  auto bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: normalise the mantissa.
    std::uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t f32_to_f16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u); // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u); // rounds to inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: scale so that the f16 subnormal unit is 1.
    if (abs < 0x33000000u) return sign; // below half the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp; // 14..24
    std::uint32_t q = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<std::uint16_t>(sign | q);
  }
  std::uint32_t r = abs - 0x38000000u; // rebias 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (r >> 13));
}

void convert_to_f32(const std::byte* src, dtype from, std::span<float> dst) {
  if (from == dtype::f32) {
    std::memcpy(dst.data(), src, dst.size() * 4);
    return;
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    std::uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = from == dtype::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
  }
}

void convert_to_bf16(const std::byte* src, dtype from, std::span<std::uint16_t> dst) {
  if (from == dtype::bf16) {
    std::memcpy(dst.data(), src, dst.size() * 2);
    return;
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    float f;
    if (from == dtype::f32) {
      std::memcpy(&f, src + 4 * i, 4);
    } else {
      std::uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      f = f16_to_f32(h);
    }
    dst[i] = f32_to_bf16(f);
  }
}

} // namespace kvactor::model
