// Which fixed-order kernel a CPU runs, and the call through it.
#include "model/forward/linear_kernels.hpp"

#include <algorithm>
#include <array>

#include "base/assert.hpp"
#include "model/forward/linear_isa.hpp"

namespace kvactor::model::layers {

std::span<const product_isa> fixed_order_isas() {
  struct found {
    std::array<product_isa, 3> isa{};
    std::size_t size = 0;
  };
  static const found isas = [] {
    found f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
      f.isa[f.size++] = product_isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      f.isa[f.size++] = product_isa::avx2;
    f.isa[f.size++] = product_isa::generic;
    return f;
  }();
  return {isas.isa.data(), isas.size};
}

const char* isa_name(product_isa isa) {
  switch (isa) {
  case product_isa::generic: return "generic";
  case product_isa::avx2: return "avx2";
  case product_isa::avx512: return "avx512";
  }
  return "?";
}

bool fuses(product_isa isa) { return isa != product_isa::generic; }

namespace {

template <class T>
void dispatch(product_isa isa, const float* x, int64_t ldx, int64_t m, const T* w, int64_t k,
              int64_t n, float* y, int64_t ldy, bool accumulate) {
  switch (isa) {
  case product_isa::avx512: avx512::product(x, ldx, m, w, k, n, y, ldy, accumulate); return;
  case product_isa::avx2: avx2::product(x, ldx, m, w, k, n, y, ldy, accumulate); return;
  case product_isa::generic: generic::product(x, ldx, m, w, k, n, y, ldy, accumulate); return;
  }
}

} // namespace

void fixed_order_product(product_isa isa, const float* x, int64_t ldx, int64_t m,
                         const packed_matrix& w, int64_t first_block, int64_t num_blocks, float* y,
                         int64_t ldy, bool accumulate) {
  const std::span<const product_isa> isas = fixed_order_isas();
  KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), isa) != isas.end(),
                 "fixed-order kernel not supported by this CPU");
  KVACTOR_ASSERT(first_block >= 0 && num_blocks >= 0 && first_block + num_blocks <= w.num_blocks(),
                 "blocks outside the packed matrix");
  constexpr int64_t rows = packed_matrix::block_rows;
  const int64_t n = std::min(w.rows(), (first_block + num_blocks) * rows) - first_block * rows;
  if (m <= 0 || n <= 0) return;
  float* yb = y + first_block * rows;
  if (w.type() == dtype::f32)
    dispatch(isa, x, ldx, m, w.f32_blocks(first_block), w.cols(), n, yb, ldy, accumulate);
  else dispatch(isa, x, ldx, m, w.bf16_blocks(first_block), w.cols(), n, yb, ldy, accumulate);
}

} // namespace kvactor::model::layers
