#include "model/quant/quant_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/assert.hpp"
#include "model/dtype.hpp"

namespace kvactor::model {
namespace {

constexpr int64_t block = quant_block_values;

uint16_t load_u16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void store_u16(std::byte* p, uint16_t v) { std::memcpy(p, &v, sizeof v); }

// The nearest integer (ties to even) of x / d within [lo, hi]; 0 when d is 0.
int32_t to_level(float x, float inv_d, int32_t lo, int32_t hi) {
  const float r = std::nearbyint(x * inv_d);
  return static_cast<int32_t>(std::clamp(r, static_cast<float>(lo), static_cast<float>(hi)));
}

// 1 / d for the scale as stored (fp16), so that levels are steps of it.
float level_step(uint16_t d) {
  const float wide = f16_to_f32(d);
  return wide != 0 ? 1.0f / wide : 0.0f;
}

void quantize_q8_0(const float* x, std::byte* out) {
  float amax = 0;
  for (int64_t i = 0; i < block; ++i) amax = std::max(amax, std::fabs(x[i]));
  const uint16_t d = f32_to_f16(amax / 127.0f);
  store_u16(out, d);
  const float inv_d = level_step(d);
  for (int64_t i = 0; i < block; ++i)
    out[2 + i] = static_cast<std::byte>(static_cast<int8_t>(to_level(x[i], inv_d, -127, 127)));
}

// NOTE: the scale maps the largest magnitude to -8, the one level with no
// positive twin, so that value is held exactly (as far as fp16 d allows).
void quantize_q4_0(const float* x, std::byte* out) {
  float extreme = 0;
  for (int64_t i = 0; i < block; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  const uint16_t d = f32_to_f16(extreme / -8.0f);
  store_u16(out, d);
  const float inv_d = level_step(d);
  for (int64_t i = 0; i < block / 2; ++i) {
    const int32_t lo = to_level(x[i], inv_d, -8, 7) + 8;
    const int32_t hi = to_level(x[i + block / 2], inv_d, -8, 7) + 8;
    out[2 + i] = static_cast<std::byte>(lo | hi << 4);
  }
}

} // namespace

std::string_view quant_name(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return "q8_0";
  case quant_format::q4_0: return "q4_0";
  }
  return "?";
}

std::optional<quant_format> parse_quant_format(std::string_view name) {
  for (quant_format f : {quant_format::q8_0, quant_format::q4_0})
    if (name == quant_name(f)) return f;
  return std::nullopt;
}

std::size_t quant_block_bytes(quant_format f) {
  return f == quant_format::q8_0 ? 2 + block : 2 + block / 2;
}

std::size_t quant_row_bytes(quant_format f, int64_t n) {
  KVACTOR_ASSERT(n % block == 0, "a quantised row is whole blocks");
  return static_cast<std::size_t>(n / block) * quant_block_bytes(f);
}

int32_t quant_offset(quant_format f) { return f == quant_format::q8_0 ? 128 : 8; }

void quantize_row(quant_format f, const float* x, int64_t n, std::byte* out) {
  KVACTOR_ASSERT(n % block == 0, "a quantised row is whole blocks");
  const std::size_t bytes = quant_block_bytes(f);
  for (int64_t b = 0; b < n / block; ++b, out += bytes) {
    if (f == quant_format::q8_0) quantize_q8_0(x + b * block, out);
    else quantize_q4_0(x + b * block, out);
  }
}

quant_block read_block(quant_format f, const std::byte* blocks, int64_t i) {
  const std::byte* p = blocks + static_cast<std::size_t>(i) * quant_block_bytes(f);
  quant_block out;
  out.d = f16_to_f32(load_u16(p));
  if (f == quant_format::q8_0) {
    std::memcpy(out.q, p + 2, block);
  } else {
    for (int64_t j = 0; j < block / 2; ++j) {
      const auto byte = static_cast<uint8_t>(p[2 + j]);
      out.q[j] = static_cast<int8_t>((byte & 15) - 8);
      out.q[j + block / 2] = static_cast<int8_t>((byte >> 4) - 8);
    }
  }
  return out;
}

void dequantize_row(quant_format f, const std::byte* blocks, int64_t n, float* out) {
  KVACTOR_ASSERT(n % block == 0, "a quantised row is whole blocks");
  for (int64_t b = 0; b < n / block; ++b) {
    const quant_block q = read_block(f, blocks, b);
    for (int64_t j = 0; j < block; ++j) out[b * block + j] = q.d * static_cast<float>(q.q[j]);
  }
}

} // namespace kvactor::model
