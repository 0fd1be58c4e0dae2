// The fixed-order products (linear_kernels.hpp) for any x86-64 CPU: GCC
// vectors of 4 (SSE2), a multiply then an add per step of the chain.
// NOTE: built with -ffp-contract=off, so the compiler never fuses them,
// whatever the flags of the build: the same bits on every CPU that runs it
// (not those of the fused kernels).
#include <cstring>

#include "model/forward/linear_isa.hpp"

namespace kvactor::model::layers::generic {
namespace {

typedef float v4 __attribute__((vector_size(16)));
typedef uint32_t u4 __attribute__((vector_size(16)));

struct vec {
  using reg = v4;
  static constexpr int row_regs = 4;
  // acc + loaded rows + the broadcast in 16 SSE registers
  static constexpr int few_rows_blocks[3] = {0, 1, 1};
  static constexpr int many_rows = 2, many_rows_blocks = 1;

  static reg zero() { return reg{0.0f, 0.0f, 0.0f, 0.0f}; }
  static reg broadcast(const float* x) { return reg{*x, *x, *x, *x}; }
  static reg chain(reg w, reg x, reg acc) { return acc + w * x; }
  static void load_row(const float* p, reg (&r)[4]) {
    for (int v = 0; v < 4; ++v) std::memcpy(&r[v], p + 4 * v, sizeof(reg));
  }
  // bf16 is the high half of its fp32: widening is exact.
  static void load_row(const uint16_t* p, reg (&r)[4]) {
    for (int v = 0; v < 4; ++v) {
      const u4 bits = u4{p[4 * v], p[4 * v + 1], p[4 * v + 2], p[4 * v + 3]} << 16;
      std::memcpy(&r[v], &bits, sizeof(reg));
    }
  }
  template <class T>
  static void store_row(const reg (&r)[4], float* y, int64_t n, bool accumulate) {
    for (int64_t l = 0; l < n; ++l) {
      const float s = r[l / 4][l % 4];
      y[l] = accumulate ? s + y[l] : s;
    }
  }
};

} // namespace

#include "model/forward/linear_tiles.inl"

} // namespace kvactor::model::layers::generic
