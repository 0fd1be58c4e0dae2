// The integer block products (quant_kernels.hpp) for any x86-64 CPU: one
// lane at a time, the chain's operations rounded one by one (this file is
// built with -ffp-contract=off).
#include <cstring>

#include "model/dtype.hpp"
#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers::quant_generic {
namespace {

constexpr int64_t lanes = 16, block = 32;

template <bool Q4>
int32_t stored(const uint8_t* q, int64_t lane, int64_t c) {
  if constexpr (Q4) {
    const uint8_t byte = q[(c / 8 * lanes + lane) * 4 + c % 4];
    return c % 8 < 4 ? byte & 15 : byte >> 4;
  } else {
    return q[(c / 4 * lanes + lane) * 4 + c % 4];
  }
}

template <bool Q4>
void product(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
             int64_t ldy, bool accumulate) {
  constexpr int32_t offset = Q4 ? 8 : 128;
  for (int64_t g = 0; g * lanes < n; ++g) {
    const uint8_t* wg = w + g * quant_group_bytes(Q4, x.blocks);
    const uint8_t* scales = wg + x.blocks * quant_ints_bytes(Q4);
    const int64_t live = n - g * lanes < lanes ? n - g * lanes : lanes;
    for (int64_t i = 0; i < m; ++i) {
      float acc[lanes] = {};
      for (int64_t b = 0; b < x.blocks; ++b) {
        const uint8_t* ints = wg + b * quant_ints_bytes(Q4);
        const int8_t* xq = x.q + (i * x.blocks + b) * block;
        const float dx = x.d[i * x.blocks + b];
        const int32_t xsum = x.sum[i * x.blocks + b];
        for (int64_t l = 0; l < live; ++l) {
          int32_t isum = 0;
          for (int64_t c = 0; c < block; ++c) isum += stored<Q4>(ints, l, c) * xq[c];
          isum -= offset * xsum;
          uint16_t d16;
          std::memcpy(&d16, scales + b * quant_scales_bytes + 2 * l, sizeof d16);
          acc[l] = acc[l] + (f16_to_f32(d16) * dx) * static_cast<float>(isum);
        }
      }
      float* out = y + i * ldy + g * lanes;
      for (int64_t l = 0; l < live; ++l) out[l] = accumulate ? acc[l] + out[l] : acc[l];
    }
  }
}

} // namespace

void product_q8_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<false>(x, m, w, n, y, ldy, accumulate);
}

void product_q4_0(const quant_rows_view& x, int64_t m, const uint8_t* w, int64_t n, float* y,
                  int64_t ldy, bool accumulate) {
  product<true>(x, m, w, n, y, ldy, accumulate);
}

} // namespace kvactor::model::layers::quant_generic
