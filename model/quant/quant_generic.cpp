// The integer block products (quant_kernels.hpp) for any x86-64 CPU: one
// lane at a time, the chain's operations rounded one by one (this file is
// built with -ffp-contract=off).
#include <cstring>

#include "model/dtype.hpp"
#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::quant_generic {
namespace {

constexpr int64_t lanes = 16, block = 32;

float half_at(const uint8_t* p, int64_t i) {
  uint16_t d16;
  std::memcpy(&d16, p + 2 * i, sizeof d16);
  return f16_to_f32(d16);
}

// Every output: for each group of W (`group_bytes` apart) and row i of x,
// chain(wg, i, live, acc) sums the row against the group's `live` lanes
// into acc, which then goes to y (+ y when accumulate).
template <class Chain>
void each_output(int64_t group_bytes, int64_t m, const uint8_t* w, int64_t n, float* y,
                 int64_t ldy, bool accumulate, Chain chain) {
  for (int64_t g = 0; g * lanes < n; ++g) {
    const uint8_t* wg = w + g * group_bytes;
    const int64_t live = n - g * lanes < lanes ? n - g * lanes : lanes;
    for (int64_t i = 0; i < m; ++i) {
      float acc[lanes] = {};
      chain(wg, i, live, acc);
      float* out = y + i * ldy + g * lanes;
      for (int64_t l = 0; l < live; ++l) out[l] = accumulate ? acc[l] + out[l] : acc[l];
    }
  }
}

// The blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL).
template <quant_format F>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  constexpr int bits = quant_bits(F);
  constexpr bool min = has_block_min(F);
  constexpr int32_t offset = quant_offset(F);
  each_output(quant_group_bytes(bits, min, x.blocks), m, w, n, y, ldy, accumulate,
              [&](const uint8_t* wg, int64_t i, int64_t live, float* acc) {
    const uint8_t* scales = wg + x.blocks * quant_ints_bytes(bits);
    for (int64_t b = 0; b < x.blocks; ++b) {
      const uint8_t* ints = wg + b * quant_ints_bytes(bits);
      const int8_t* xq = x.q + (i * x.blocks + b) * block;
      const float dx = x.d[i * x.blocks + b];
      const int32_t xsum = x.sum[i * x.blocks + b];
      for (int64_t l = 0; l < live; ++l) {
        int32_t isum = 0;
        for (int64_t c = 0; c < block; ++c)
          isum += quant_unsigned(F, stored_int(bits, ints, l, c)) * xq[c];
        isum -= offset * xsum;
        const uint8_t* meta = scales + b * quant_scales_bytes(min);
        const float scaled = (half_at(meta, l) * dx) * static_cast<float>(isum);
        if constexpr (min)
          acc[l] = acc[l] + (scaled + (half_at(meta + 32, l) * dx) * static_cast<float>(xsum));
        else
          acc[l] = acc[l] + scaled;
      }
    }
  });
}

// The K formats: sub-block by sub-block, the integer sums S (and M) of
// quant_kernels.hpp.
template <quant_format F>
void product_k(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
               int64_t ldy, bool accumulate) {
  constexpr int64_t super = 256, width = quant_sub_values(F);
  constexpr int32_t offset = quant_offset(F);
  each_output(k_group_bytes(F, x.blocks), m, w, n, y, ldy, accumulate,
              [&](const uint8_t* wg, int64_t i, int64_t live, float* acc) {
    for (int64_t b = 0; b < x.blocks; ++b) {
      const uint8_t* ints = wg + b * k_ints_bytes(F);
      const uint8_t* meta = wg + x.blocks * k_ints_bytes(F) + b * k_meta_bytes(F);
      const int8_t* xq = x.q + (i * x.blocks + b) * super;
      const int32_t* xsum = x.sum + (i * x.blocks + b) * 16;
      const float dx = x.d[i * x.blocks + b];
      for (int64_t l = 0; l < live; ++l) {
        int32_t total = 0, mins = 0;
        for (int64_t s = 0; s < k_subs(F); ++s) {
          int32_t t = 0, sums = 0; // the sub-block's products and x's sum
          for (int64_t c = s * width; c < (s + 1) * width; ++c)
            t += quant_unsigned(F, k_stored(F, ints, l, c)) * xq[c];
          for (int64_t k = s * width / 16; k < (s + 1) * width / 16; ++k) sums += xsum[k];
          // NOTE: offset 0 for the formats with mins, min 0 for the others.
          total += k_sub_scale(F, meta, s, l) * (t - offset * sums);
          mins += k_sub_min(F, meta, s, l) * sums;
        }
        const float scaled = (half_at(meta, l) * dx) * static_cast<float>(total);
        if constexpr (has_sub_min(F))
          acc[l] = acc[l] + (scaled - (half_at(meta + 32, l) * dx) * static_cast<float>(mins));
        else
          acc[l] = acc[l] + scaled;
      }
    }
  });
}

// The entry of format F.
template <quant_format F>
void product_of(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                int64_t ldy, bool accumulate) {
  if constexpr (is_k_format(F))
    product_k<F>(x, m, w, n, y, ldy, accumulate);
  else
    product<F>(x, m, w, n, y, ldy, accumulate);
}

} // namespace

const quant_products products = KVACTOR_QUANT_PRODUCTS_OF(product_of);

} // namespace kvactor::model::layers::quant_generic
