// The bf16 pair products (pair_kernels.hpp) for any x86-64 CPU: GCC vectors
// of 4 (SSE2); per pair, the odd product is added, then the even one (both
// exact in fp32), as Intel documents vdpbf16ps; no denormal flushing.
// NOTE: the products are exact, so fusing them into the adds (or not)
// changes no bit. Written with explicit vectors: GCC 12's loop vectorizer
// mixed up the lanes of the plain scalar loop at -O3.
#include <cstring>

#include "model/forward/pair_isa.hpp"

namespace kvactor::model::layers::pair_generic {
namespace {

typedef float v4 __attribute__((vector_size(16)));
typedef uint32_t u4 __attribute__((vector_size(16)));

constexpr int64_t block_rows = 16;

float widen(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// One row of x against one block of W: n <= 16 outputs. Each 32-bit word of
// a pair row holds a lane's even value (low half) and odd value (high half).
void row_block(const uint16_t* x, const uint16_t* w, int64_t k, int64_t n, float* y,
               bool accumulate) {
  v4 acc[4] = {};
  for (int64_t p = 0; p < k / 2; ++p) {
    const float xe = widen(x[2 * p]), xo = widen(x[2 * p + 1]);
    const v4 x_even = {xe, xe, xe, xe}, x_odd = {xo, xo, xo, xo};
    for (int g = 0; g < 4; ++g) {
      u4 pairs;
      std::memcpy(&pairs, w + p * 2 * block_rows + 8 * g, sizeof pairs);
      const u4 even_bits = pairs << 16, odd_bits = pairs & 0xffff0000u;
      v4 even, odd;
      std::memcpy(&even, &even_bits, sizeof even);
      std::memcpy(&odd, &odd_bits, sizeof odd);
      acc[g] = (acc[g] + x_odd * odd) + x_even * even;
    }
  }
  float out[block_rows];
  std::memcpy(out, acc, sizeof out);
  for (int64_t l = 0; l < n; ++l) y[l] = accumulate ? out[l] + y[l] : out[l];
}

} // namespace

void product(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t k,
             int64_t n, float* y, int64_t ldy, bool accumulate) {
  // NOTE: blocks outside, rows inside: a block of W stays in cache while
  // every row passes over it.
  for (int64_t b = 0; b * block_rows < n; ++b) {
    const int64_t nb = n - b * block_rows < block_rows ? n - b * block_rows : block_rows;
    for (int64_t i = 0; i < m; ++i)
      row_block(x + i * ldx, w + b * block_rows * k, k, nb, y + i * ldy + b * block_rows,
                accumulate);
  }
}

} // namespace kvactor::model::layers::pair_generic
