#pragma once
// Element types of the KV cache and activations, plus the 2-byte storage
// types the host code uses for fp16 and bf16. The bit patterns are IEEE
// binary16 and bfloat16, identical to CUDA's __half and __nv_bfloat16, so the
// same memory is read by the CPU kernels, the emulator and the GPU.
// NOTE: kept C++17 and free of CUDA headers: nvcc includes it too.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kvactor::kernels {

enum class dtype : int32_t { f32 = 0, f16 = 1, bf16 = 2 };

constexpr size_t dtype_size(dtype t) { return t == dtype::f32 ? 4 : 2; }

constexpr const char* dtype_name(dtype t) {
  return t == dtype::f32 ? "f32" : t == dtype::f16 ? "f16" : "bf16";
}

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}

inline float bits_float(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Round to nearest even, with subnormals, infinities and NaN.
inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)
    return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u); // >= 65520 rounds to inf
  if (abs < 0x38800000u) {                                              // below 2^-14: subnormal
    // NOTE: a * 2^24 is exact; adding and subtracting 1.5 * 2^23 rounds it to
    // an integer, nearest even, without depending on the FP environment.
    const float scaled = bits_float(abs) * 16777216.0f;
    const float rounded = (scaled + 12582912.0f) - 12582912.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
  }
  const uint32_t mant = abs & 0x7fffffu;
  const uint32_t exp = (abs >> 23) - 127u + 15u;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

} // namespace detail

// IEEE binary16 storage; arithmetic goes through float.
struct half_t {
  uint16_t bits;
  half_t() = default;
  explicit half_t(float f) : bits(detail::float_to_half_bits(f)) {}
  explicit operator float() const { return detail::half_bits_to_float(bits); }
};

// bfloat16 storage; arithmetic goes through float.
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  explicit bfloat16_t(float f) : bits(detail::float_to_bf16_bits(f)) {}
  explicit operator float() const { return detail::bf16_bits_to_float(bits); }
};

static_assert(sizeof(half_t) == 2 && sizeof(bfloat16_t) == 2);

// Reads element i of a row of type t as float (slow path: tests, tails).
inline float load_as_float(dtype t, const void* row, size_t i) {
  switch (t) {
  case dtype::f32: return static_cast<const float*>(row)[i];
  case dtype::f16: return static_cast<float>(static_cast<const half_t*>(row)[i]);
  case dtype::bf16: return static_cast<float>(static_cast<const bfloat16_t*>(row)[i]);
  }
  return 0.0f;
}

inline void store_from_float(dtype t, void* row, size_t i, float v) {
  switch (t) {
  case dtype::f32: static_cast<float*>(row)[i] = v; break;
  case dtype::f16: static_cast<half_t*>(row)[i] = half_t(v); break;
  case dtype::bf16: static_cast<bfloat16_t*>(row)[i] = bfloat16_t(v); break;
  }
}

} // namespace kvactor::kernels
