#include "model/quant/quant_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "base/assert.hpp"
#include "model/dtype.hpp"

namespace kvactor::model {
namespace {

constexpr int64_t block = 32, super = 256;

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

// The value of the largest magnitude of x[0 .. n) (the first of equals).
float signed_extreme(const float* x, int64_t n) {
  float extreme = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
  return extreme;
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

// A block's 32 levels n (0 .. 15, or 0 .. 31 with `fifth`) as nibbles at
// `qs`, the first half in the low ones (and their fifth bits as a
// little-endian 32-bit mask at `qh`).
void put_levels(const int32_t (&n)[32], std::byte* qs, std::byte* qh, bool fifth) {
  uint32_t mask = 0;
  for (int64_t i = 0; i < block / 2; ++i) {
    const int32_t lo = n[i], hi = n[i + block / 2];
    qs[i] = static_cast<std::byte>((lo & 15) | (hi & 15) << 4);
    mask |= static_cast<uint32_t>(lo >> 4) << i | static_cast<uint32_t>(hi >> 4) << (i + block / 2);
  }
  if (fifth) std::memcpy(qh, &mask, sizeof mask);
}

// Q4_0 (Q5_0 with `fifth`): the scale maps the largest magnitude to -8
// (-16), the one level with no positive twin, so that value is held exactly
// (as far as fp16 d allows).
void quantize_q4_0(const float* x, std::byte* out, bool fifth) {
  const int32_t half = fifth ? 16 : 8;
  const uint16_t d = f32_to_f16(signed_extreme(x, block) / static_cast<float>(-half));
  store_u16(out, d);
  const float inv_d = level_step(d);
  int32_t n[32];
  for (int64_t i = 0; i < block; ++i) n[i] = to_level(x[i], inv_d, -half, half - 1) + half;
  put_levels(n, out + (fifth ? 6 : 2), out + 2, fifth);
}

// Q4_1 (Q5_1 with `fifth`): the block's range [lo, hi] over 16 (32)
// levels from m = lo; every value to the nearest level as stored.
void quantize_q4_1(const float* x, std::byte* out, bool fifth) {
  const int32_t top = fifth ? 31 : 15;
  float lo = x[0], hi = x[0];
  for (int64_t i = 1; i < block; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  const uint16_t d = f32_to_f16((hi - lo) / static_cast<float>(top)), m = f32_to_f16(lo);
  store_u16(out, d);
  store_u16(out + 2, m);
  const float inv_d = level_step(d), min = f16_to_f32(m);
  int32_t n[32];
  for (int64_t i = 0; i < block; ++i) n[i] = to_level(x[i] - min, inv_d, 0, top);
  put_levels(n, out + (fifth ? 8 : 4), out + 4, fifth);
}

// Per sub-block of `width` of a super-block, the range [min(0, lo), hi]
// over `top` steps: each step and low = -min(0, lo); returns the largest
// step and low.
template <std::size_t Subs>
std::pair<float, float> sub_block_ranges(const float* x, int64_t width, int32_t top,
                                         float (&step)[Subs], float (&low)[Subs]) {
  float max_step = 0, max_low = 0;
  for (std::size_t k = 0; k < Subs; ++k) {
    const float* v = x + width * static_cast<int64_t>(k);
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < width; ++i) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
    step[k] = (hi - lo) / static_cast<float>(top);
    low[k] = -lo;
    max_step = std::max(max_step, step[k]);
    max_low = std::max(max_low, low[k]);
  }
  return {max_step, max_low};
}

// Q4_K (Q5_K with `fifth`): per sub-block of 32 the range [min(0, lo), hi]
// over 16 (32) levels; the sub-blocks' steps and mins as 6-bit multiples of
// d and dmin; then every value to the nearest level of its sub-block as
// stored.
void quantize_q4_k(const float* x, std::byte* out, bool fifth) {
  const int32_t top = fifth ? 31 : 15;
  float step[8], low[8];
  const auto [max_step, max_low] = sub_block_ranges(x, 32, top, step, low);
  const uint16_t d = f32_to_f16(max_step / 63.0f), dmin = f32_to_f16(max_low / 63.0f);
  store_u16(out, d);
  store_u16(out + 2, dmin);
  const float inv_d = level_step(d), inv_dmin = level_step(dmin);
  int32_t s[8], m[8];
  for (int64_t j = 0; j < 8; ++j) {
    s[j] = to_level(step[j], inv_d, 0, 63);
    m[j] = to_level(low[j], inv_dmin, 0, 63);
  }
  auto* scales = reinterpret_cast<uint8_t*>(out + 4);
  for (int64_t j = 0; j < 4; ++j) {
    scales[j] = static_cast<uint8_t>(s[j] | (s[j + 4] >> 4) << 6);
    scales[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    scales[j + 8] = static_cast<uint8_t>((s[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
  auto* qh = reinterpret_cast<uint8_t*>(out + 16);
  auto* qs = qh + (fifth ? 32 : 0);
  if (fifth) std::memset(qh, 0, 32);
  for (int64_t j = 0; j < 8; ++j) {
    const float dj = f16_to_f32(d) * static_cast<float>(s[j]);
    const float mj = f16_to_f32(dmin) * static_cast<float>(m[j]);
    const float inv = dj != 0 ? 1.0f / dj : 0.0f;
    for (int64_t i = 0; i < 32; ++i) {
      const int32_t n = to_level(x[32 * j + i] + mj, inv, 0, top);
      uint8_t& byte = qs[32 * (j / 2) + i];
      const auto nibble = static_cast<uint8_t>(n & 15);
      byte =
        static_cast<uint8_t>(j % 2 == 0 ? (byte & 0xf0) | nibble : (byte & 0x0f) | nibble << 4);
      if (fifth) qh[i] = static_cast<uint8_t>(qh[i] | (n >> 4) << j);
    }
  }
}

// Per sub-block of 16 of a super-block, the step that maps its largest
// magnitude to -half (the one level with no positive twin, as Q4_0's);
// returns the largest |step|.
float symmetric_steps(const float* x, int32_t half, float (&step)[16]) {
  float max_step = 0;
  for (int64_t k = 0; k < 16; ++k) {
    step[k] = signed_extreme(x + 16 * k, 16) / static_cast<float>(-half);
    max_step = std::max(max_step, std::fabs(step[k]));
  }
  return max_step;
}

// Q6_K: per sub-block of 16 the step that maps the largest magnitude to
// -32 (as Q4_0), the steps as int8 multiples of d, then every value to the
// nearest level of its sub-block as stored.
void quantize_q6_k(const float* x, std::byte* out) {
  float step[16];
  const float max_step = symmetric_steps(x, 32, step);
  const uint16_t d = f32_to_f16(max_step / 127.0f);
  store_u16(out + 208, d);
  const float inv_d = level_step(d);
  auto* ql = reinterpret_cast<uint8_t*>(out);
  auto* qh = ql + 128;
  auto* scales = reinterpret_cast<int8_t*>(out + 192);
  std::memset(out, 0, 192);
  for (int64_t k = 0; k < 16; ++k) {
    scales[k] = static_cast<int8_t>(to_level(step[k], inv_d, -128, 127));
    const float dk = f16_to_f32(d) * static_cast<float>(scales[k]);
    const float inv = dk != 0 ? 1.0f / dk : 0.0f;
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t c = 16 * k + i, h = c / 128, t = c % 128 / 32, l = c % 32;
      const auto n = static_cast<uint8_t>(to_level(x[c], inv, -32, 31) + 32);
      ql[64 * h + 32 * (t & 1) + l] |= static_cast<uint8_t>((n & 15) << (t >= 2 ? 4 : 0));
      qh[32 * h + l] |= static_cast<uint8_t>((n >> 4) << (2 * t));
    }
  }
}

// Q2_K: per sub-block of 16 the range [min(0, lo), hi] over 4 levels (as
// Q4_K over 16), the steps and mins as 4-bit multiples of d and dmin, then
// every value to the nearest level of its sub-block as stored.
void quantize_q2_k(const float* x, std::byte* out) {
  float step[16], low[16];
  const auto [max_step, max_low] = sub_block_ranges(x, 16, 3, step, low);
  const uint16_t d = f32_to_f16(max_step / 15.0f), dmin = f32_to_f16(max_low / 15.0f);
  store_u16(out + 80, d);
  store_u16(out + 82, dmin);
  const float inv_d = level_step(d), inv_dmin = level_step(dmin);
  auto* scales = reinterpret_cast<uint8_t*>(out);
  auto* qs = scales + 16;
  std::memset(qs, 0, 64);
  for (int64_t k = 0; k < 16; ++k) {
    const int32_t s = to_level(step[k], inv_d, 0, 15), m = to_level(low[k], inv_dmin, 0, 15);
    scales[k] = static_cast<uint8_t>(s | m << 4);
    const float dk = f16_to_f32(d) * static_cast<float>(s);
    const float mk = f16_to_f32(dmin) * static_cast<float>(m);
    const float inv = dk != 0 ? 1.0f / dk : 0.0f;
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t c = 16 * k + i, h = c / 128, t = c % 128 / 32, l = c % 32;
      qs[32 * h + l] |= static_cast<uint8_t>(to_level(x[c] + mk, inv, 0, 3) << (2 * t));
    }
  }
}

// Q3_K: per sub-block of 16 the step that maps the largest magnitude to -4
// (as Q6_K to -32), the steps as 6-bit signed multiples of d, then every
// value to the nearest level of its sub-block as stored.
void quantize_q3_k(const float* x, std::byte* out) {
  float step[16];
  const float max_step = symmetric_steps(x, 4, step);
  const uint16_t d = f32_to_f16(max_step / 31.0f);
  store_u16(out + 108, d);
  const float inv_d = level_step(d);
  auto* hmask = reinterpret_cast<uint8_t*>(out);
  auto* qs = hmask + 32;
  auto* scales = hmask + 96;
  std::memset(out, 0, 108);
  for (int64_t k = 0; k < 16; ++k) {
    const int32_t s = to_level(step[k], inv_d, -32, 31);
    const auto u = static_cast<uint8_t>(s + 32);
    scales[k % 8] |= static_cast<uint8_t>((u & 15) << (k < 8 ? 0 : 4));
    scales[8 + k % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (k / 4)));
    const float dk = f16_to_f32(d) * static_cast<float>(s);
    const float inv = dk != 0 ? 1.0f / dk : 0.0f;
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t c = 16 * k + i, h = c / 128, t = c % 128 / 32, l = c % 32;
      const int32_t n = to_level(x[c], inv, -4, 3) + 4;
      qs[32 * h + l] |= static_cast<uint8_t>((n & 3) << (2 * t));
      hmask[l] |= static_cast<uint8_t>((n >> 2) << (4 * h + t));
    }
  }
}

// The index of the level of iq4_levels nearest to t (the lower on a tie).
uint8_t nearest_iq4(float t) {
  uint8_t best = 0;
  for (uint8_t k = 1; k < 16; ++k)
    if (std::fabs(t - iq4_levels[k]) < std::fabs(t - iq4_levels[best])) best = k;
  return best;
}

// 32 values at x to the nearest levels of step d (IQ4_NL's block, an
// IQ4_XS sub-block), as nibbles at qs laid out as Q4_0's.
void put_iq4(const float* x, float d, std::byte* qs) {
  const float inv = d != 0 ? 1.0f / d : 0.0f;
  int32_t n[32];
  for (int64_t i = 0; i < block; ++i) n[i] = nearest_iq4(x[i] * inv);
  put_levels(n, qs, nullptr, false);
}

// The step that maps the largest magnitude of `count` values to the level
// -127 (the codebook's widest).
float iq4_step(const float* x, int64_t count) { return signed_extreme(x, count) / -127.0f; }

// IQ4_NL: the step of iq4_step as fp16 d, then every value to the nearest
// level.
void quantize_iq4_nl(const float* x, std::byte* out) {
  const uint16_t d = f32_to_f16(iq4_step(x, block));
  store_u16(out, d);
  put_iq4(x, f16_to_f32(d), out + 2);
}

// IQ4_XS: per sub-block of 32 the step of iq4_step, the steps as 6-bit
// signed multiples of d, then every value to the nearest level of its
// sub-block as stored.
void quantize_iq4_xs(const float* x, std::byte* out) {
  float step[8], max_step = 0;
  for (int64_t j = 0; j < 8; ++j) {
    step[j] = iq4_step(x + 32 * j, 32);
    max_step = std::max(max_step, std::fabs(step[j]));
  }
  const uint16_t d = f32_to_f16(max_step / 31.0f);
  store_u16(out, d);
  const float inv_d = level_step(d);
  uint16_t scales_h = 0;
  auto* scales_l = reinterpret_cast<uint8_t*>(out + 4);
  std::memset(scales_l, 0, 4);
  for (int64_t j = 0; j < 8; ++j) {
    const int32_t s = to_level(step[j], inv_d, -32, 31);
    const auto u = static_cast<uint32_t>(s + 32);
    scales_l[j / 2] = static_cast<uint8_t>(scales_l[j / 2] | (u & 15) << (4 * (j % 2)));
    scales_h = static_cast<uint16_t>(scales_h | (u >> 4) << (2 * j));
    put_iq4(x + 32 * j, f16_to_f32(d) * static_cast<float>(s), out + 8 + 16 * j);
  }
  store_u16(out + 2, scales_h);
}

} // namespace

std::span<const quant_format> all_quant_formats() {
  static constexpr quant_format all[] = {
    quant_format::q8_0, quant_format::q4_0, quant_format::q4_1, quant_format::q5_0,
    quant_format::q5_1, quant_format::q2_k, quant_format::q3_k, quant_format::q4_k,
    quant_format::q5_k, quant_format::q6_k, quant_format::iq4_nl, quant_format::iq4_xs};
  return all;
}

int64_t quant_block_values(quant_format f) { return is_k_format(f) ? super : block; }

std::string_view quant_name(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return "q8_0";
  case quant_format::q4_0: return "q4_0";
  case quant_format::q4_1: return "q4_1";
  case quant_format::q5_0: return "q5_0";
  case quant_format::q5_1: return "q5_1";
  case quant_format::q2_k: return "q2_k";
  case quant_format::q3_k: return "q3_k";
  case quant_format::q4_k: return "q4_k";
  case quant_format::q5_k: return "q5_k";
  case quant_format::q6_k: return "q6_k";
  case quant_format::iq4_nl: return "iq4_nl";
  case quant_format::iq4_xs: return "iq4_xs";
  }
  return "?";
}

std::optional<quant_format> parse_quant_format(std::string_view name) {
  for (quant_format f : all_quant_formats())
    if (name == quant_name(f)) return f;
  return std::nullopt;
}

std::size_t quant_block_bytes(quant_format f) {
  switch (f) {
  case quant_format::q8_0: return 2 + block;
  case quant_format::q4_0:
  case quant_format::iq4_nl: return 2 + block / 2;
  case quant_format::q4_1: return 4 + block / 2;
  case quant_format::q5_0: return 2 + 4 + block / 2;
  case quant_format::q5_1: return 4 + 4 + block / 2;
  case quant_format::q2_k: return super / 16 + super / 4 + 4;
  case quant_format::q3_k: return super / 8 + super / 4 + 12 + 2;
  case quant_format::q4_k: return 4 + 12 + super / 2;
  case quant_format::q5_k: return 4 + 12 + super / 8 + super / 2;
  case quant_format::q6_k: return super / 2 + super / 4 + 16 + 2;
  case quant_format::iq4_xs: return 2 + 2 + 4 + super / 2;
  }
  return 0;
}

std::size_t quant_row_bytes(quant_format f, int64_t n) {
  const int64_t values = quant_block_values(f);
  KVACTOR_ASSERT(n % values == 0, "a quantised row is whole blocks");
  return static_cast<std::size_t>(n / values) * quant_block_bytes(f);
}

void quantize_row(quant_format f, const float* x, int64_t n, std::byte* out) {
  const int64_t values = quant_block_values(f);
  KVACTOR_ASSERT(n % values == 0, "a quantised row is whole blocks");
  const std::size_t bytes = quant_block_bytes(f);
  for (int64_t b = 0; b < n / values; ++b, out += bytes) {
    const float* v = x + b * values;
    switch (f) {
    case quant_format::q8_0: quantize_q8_0(v, out); break;
    case quant_format::q4_0: quantize_q4_0(v, out, false); break;
    case quant_format::q5_0: quantize_q4_0(v, out, true); break;
    case quant_format::q4_1: quantize_q4_1(v, out, false); break;
    case quant_format::q5_1: quantize_q4_1(v, out, true); break;
    case quant_format::q2_k: quantize_q2_k(v, out); break;
    case quant_format::q3_k: quantize_q3_k(v, out); break;
    case quant_format::q4_k: quantize_q4_k(v, out, false); break;
    case quant_format::q5_k: quantize_q4_k(v, out, true); break;
    case quant_format::q6_k: quantize_q6_k(v, out); break;
    case quant_format::iq4_nl: quantize_iq4_nl(v, out); break;
    case quant_format::iq4_xs: quantize_iq4_xs(v, out); break;
    }
  }
}

quant_block read_block(quant_format f, const std::byte* blocks, int64_t i) {
  KVACTOR_ASSERT(!is_k_format(f), "a K format's blocks are super-blocks");
  const std::byte* p = blocks + static_cast<std::size_t>(i) * quant_block_bytes(f);
  quant_block out;
  out.d = f16_to_f32(load_u16(p));
  if (f == quant_format::q8_0) {
    std::memcpy(out.q, p + 2, block);
  } else {
    const bool fifth = quant_bits(f) == 5, min = has_block_min(f);
    const std::byte* after = p + (min ? 4 : 2); // d (and m)
    if (min) out.m = f16_to_f32(load_u16(p + 2));
    uint32_t qh = 0;
    if (fifth) std::memcpy(&qh, after, sizeof qh);
    const std::byte* qs = after + (fifth ? 4 : 0);
    const auto level = [f](uint32_t n) {
      return static_cast<int8_t>(has_codebook(f) ? iq4_levels[n]
                                                 : static_cast<int32_t>(n) - quant_offset(f));
    };
    for (int64_t j = 0; j < block / 2; ++j) {
      const auto byte = static_cast<uint32_t>(qs[j]);
      out.q[j] = level((byte & 15) | (qh >> j & 1) << 4);
      out.q[j + block / 2] = level((byte >> 4) | (qh >> (j + block / 2) & 1) << 4);
    }
  }
  return out;
}

quant_superblock read_superblock(quant_format f, const std::byte* blocks, int64_t i) {
  KVACTOR_ASSERT(is_k_format(f), "only the K formats have super-blocks");
  const std::byte* p = blocks + static_cast<std::size_t>(i) * quant_block_bytes(f);
  const auto* u = reinterpret_cast<const uint8_t*>(p);
  quant_superblock out;
  if (f == quant_format::q2_k || f == quant_format::q3_k) {
    // Q2_K's and Q3_K's low 2 bits alike; Q3_K's third from hmask.
    const bool q3 = f == quant_format::q3_k;
    const uint8_t* qs = u + (q3 ? 32 : 16);
    out.d = f16_to_f32(load_u16(p + (q3 ? 108 : 80)));
    if (q3) {
      const uint8_t* scales = u + 96;
      for (int64_t k = 0; k < 16; ++k) {
        const int low = k < 8 ? scales[k] & 15 : scales[k - 8] >> 4;
        out.scale[k] = (low | (scales[8 + k % 4] >> (2 * (k / 4)) & 3) << 4) - 32;
      }
    } else {
      out.dmin = f16_to_f32(load_u16(p + 82));
      for (int64_t k = 0; k < 16; ++k) out.scale[k] = u[k] & 15, out.min[k] = u[k] >> 4;
    }
    for (int64_t c = 0; c < super; ++c) {
      const int64_t h = c / 128, t = c % 128 / 32, l = c % 32;
      const int n = qs[32 * h + l] >> (2 * t) & 3;
      out.n[c] = static_cast<uint8_t>(q3 ? n | (u[l] >> (4 * h + t) & 1) << 2 : n);
    }
  } else if (f == quant_format::iq4_xs) {
    out.d = f16_to_f32(load_u16(p));
    const uint16_t scales_h = load_u16(p + 2);
    const uint8_t *scales_l = u + 4, *qs = u + 8;
    for (int64_t j = 0; j < 8; ++j)
      out.scale[j] =
        ((scales_l[j / 2] >> (4 * (j % 2)) & 15) | (scales_h >> (2 * j) & 3) << 4) - 32;
    for (int64_t c = 0; c < super; ++c) {
      const uint8_t byte = qs[16 * (c / 32) + c % 16];
      out.n[c] = static_cast<uint8_t>(c % 32 < 16 ? byte & 15 : byte >> 4);
    }
  } else if (f != quant_format::q6_k) {
    out.d = f16_to_f32(load_u16(p));
    out.dmin = f16_to_f32(load_u16(p + 2));
    const uint8_t* scales = u + 4;
    for (int64_t j = 0; j < 4; ++j) {
      out.scale[j] = scales[j] & 63;
      out.min[j] = scales[j + 4] & 63;
      out.scale[j + 4] = (scales[j + 8] & 15) | (scales[j] >> 6) << 4;
      out.min[j + 4] = (scales[j + 8] >> 4) | (scales[j + 4] >> 6) << 4;
    }
    const bool fifth = f == quant_format::q5_k;
    const uint8_t* qh = u + 16;
    const uint8_t* qs = qh + (fifth ? 32 : 0);
    for (int64_t c = 0; c < super; ++c) {
      const uint8_t byte = qs[32 * (c / 64) + c % 32];
      const int n = c % 64 < 32 ? byte & 15 : byte >> 4;
      out.n[c] = static_cast<uint8_t>(fifth ? n | (qh[c % 32] >> (c / 32) & 1) << 4 : n);
    }
  } else {
    const uint8_t *ql = u, *qh = u + 128;
    for (int64_t k = 0; k < 16; ++k) out.scale[k] = static_cast<int8_t>(u[192 + k]);
    out.d = f16_to_f32(load_u16(p + 208));
    for (int64_t c = 0; c < super; ++c) {
      const int64_t h = c / 128, t = c % 128 / 32, l = c % 32;
      const uint8_t low = ql[64 * h + 32 * (t & 1) + l] >> (t >= 2 ? 4 : 0) & 15;
      out.n[c] = static_cast<uint8_t>(low | (qh[32 * h + l] >> (2 * t) & 3) << 4);
    }
  }
  return out;
}

void dequantize_row(quant_format f, const std::byte* blocks, int64_t n, float* out) {
  KVACTOR_ASSERT(n % quant_block_values(f) == 0, "a quantised row is whole blocks");
  if (is_k_format(f)) {
    const int64_t sub = quant_sub_values(f), offset = quant_offset(f);
    for (int64_t b = 0; b < n / super; ++b) {
      const quant_superblock q = read_superblock(f, blocks, b);
      for (int64_t c = 0; c < super; ++c) {
        const int64_t s = c / sub;
        const float scaled =
          (q.d * static_cast<float>(q.scale[s])) *
          static_cast<float>(quant_unsigned(f, q.n[c]) - offset);
        out[b * super + c] =
          has_sub_min(f) ? scaled - q.dmin * static_cast<float>(q.min[s]) : scaled;
      }
    }
    return;
  }
  for (int64_t b = 0; b < n / block; ++b) {
    const quant_block q = read_block(f, blocks, b);
    for (int64_t j = 0; j < block; ++j) {
      const float scaled = q.d * static_cast<float>(q.q[j]);
      out[b * block + j] = has_block_min(f) ? scaled + q.m : scaled;
    }
  }
}

} // namespace kvactor::model
