#include "model/dtype.hpp"

#include <cstring>

namespace kvactor::model {

std::string_view safetensors_name(dtype t) {
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

void convert_to_f32(const std::byte* src, dtype from, std::span<float> dst) {
  if (from == dtype::f32) {
    std::memcpy(dst.data(), src, dst.size() * 4);
    return;
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = from == dtype::bf16 ? bf16_to_f32(h) : f16_to_f32(h);
  }
}

void convert_to_bf16(const std::byte* src, dtype from, std::span<uint16_t> dst) {
  if (from == dtype::bf16) {
    std::memcpy(dst.data(), src, dst.size() * 2);
    return;
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    float f;
    if (from == dtype::f32) {
      std::memcpy(&f, src + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      f = f16_to_f32(h);
    }
    dst[i] = f32_to_bf16(f);
  }
}

} // namespace kvactor::model
