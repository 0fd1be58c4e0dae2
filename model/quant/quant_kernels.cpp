// Activations quantised row by row, which integer kernel a CPU runs, and
// the call through it.
#include "model/quant/quant_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "base/assert.hpp"
#include "model/quant/quant_isa.hpp"

namespace kvactor::model::layers {

void quantized_rows::resize(int64_t m, int64_t k, int64_t values) {
  KVACTOR_ASSERT(values == 32 || values == 256, "activations come in blocks of 32 or 256");
  KVACTOR_ASSERT(k % values == 0, "quantised rows are whole blocks");
  block = values;
  blocks = k / block;
  const auto num_blocks = static_cast<std::size_t>(m * blocks);
  q.resize(num_blocks * static_cast<std::size_t>(block));
  d.resize(num_blocks);
  sum.resize(num_blocks * static_cast<std::size_t>(sums_per_block()));
}

void quantized_rows::quantize(int64_t i, const float* x) {
  const int64_t sums = sums_per_block(), span = block / sums;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * block;
    const auto at = static_cast<std::size_t>(i * blocks + b);
    float amax = 0;
    bool finite = true;
    for (int64_t c = 0; c < block; ++c) {
      amax = std::max(amax, std::fabs(v[c]));
      finite = finite && std::isfinite(v[c]);
    }
    const float scale = finite ? amax / 127.0f : std::numeric_limits<float>::quiet_NaN();
    const float inv = finite && scale != 0 ? 1.0f / scale : 0.0f;
    int8_t* out = q.data() + at * static_cast<std::size_t>(block);
    for (int64_t c = 0; c < block; ++c) {
      const float r = finite ? std::nearbyint(v[c] * inv) : 0.0f;
      out[c] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
    }
    d[at] = scale;
    for (int64_t s = 0; s < sums; ++s) {
      int32_t total = 0;
      for (int64_t c = s * span; c < (s + 1) * span; ++c) total += out[c];
      sum[at * static_cast<std::size_t>(sums) + static_cast<std::size_t>(s)] = total;
    }
  }
}

void quantize_rows(const float* x, int64_t ldx, int64_t m, int64_t k, quantized_rows& out,
                   int64_t block) {
  out.resize(m, k, block);
  for (int64_t i = 0; i < m; ++i) out.quantize(i, x + i * ldx);
}

std::span<const quant_isa> quant_product_isas() {
  struct found {
    std::array<quant_isa, 4> isa{};
    std::size_t size = 0;
  };
  static const found isas = [] {
    found f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
      f.isa[f.size++] = quant_isa::avx512_vnni;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni"))
      f.isa[f.size++] = quant_isa::avx_vnni;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      f.isa[f.size++] = quant_isa::avx2;
    f.isa[f.size++] = quant_isa::generic;
    return f;
  }();
  return {isas.isa.data(), isas.size};
}

const char* isa_name(quant_isa isa) {
  switch (isa) {
  case quant_isa::generic: return "generic";
  case quant_isa::avx_vnni: return "avx_vnni";
  case quant_isa::avx2: return "avx2";
  case quant_isa::avx512_vnni: return "avx512_vnni";
  }
  return "?";
}

void quant_product(quant_isa isa, const quantized_rows& x, int64_t m, const quantized_matrix& w,
                   int64_t first_group, int64_t num_groups, float* y, int64_t ldy,
                   bool accumulate) {
  const std::span<const quant_isa> isas = quant_product_isas();
  KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), isa) != isas.end(),
                 "integer kernel not supported by this CPU");
  KVACTOR_ASSERT(first_group >= 0 && num_groups >= 0 && first_group + num_groups <= w.num_groups(),
                 "groups outside the quantised matrix");
  KVACTOR_ASSERT(x.block == quant_block_values(w.format()) && x.blocks == w.blocks_per_row() &&
                   static_cast<int64_t>(x.d.size()) >= m * x.blocks,
                 "quantised rows do not match the matrix");
  constexpr int64_t rows = quantized_matrix::group_rows;
  const int64_t n = std::min(w.rows(), (first_group + num_groups) * rows) - first_group * rows;
  if (m <= 0 || n <= 0) return;
  const quant_rows_view xv{x.q.data(), x.d.data(), x.sum.data(), x.blocks};
  const uint8_t* wg = w.groups(first_group);
  float* yg = y + first_group * rows;
  const quant_format f = w.format();
#define KVACTOR_QUANT_CALL(ns)                                                                     \
  switch (f) {                                                                                     \
  case quant_format::q8_0: return ns::product_q8_0(xv, m, wg, n, yg, ldy, accumulate);             \
  case quant_format::q4_0: return ns::product_q4_0(xv, m, wg, n, yg, ldy, accumulate);             \
  case quant_format::q4_k: return ns::product_q4_k(xv, m, wg, n, yg, ldy, accumulate);             \
  case quant_format::q6_k: return ns::product_q6_k(xv, m, wg, n, yg, ldy, accumulate);             \
  }
  switch (isa) {
  case quant_isa::avx512_vnni: KVACTOR_QUANT_CALL(avx512_vnni) return;
  case quant_isa::avx_vnni: KVACTOR_QUANT_CALL(avx_vnni) return;
  case quant_isa::avx2: KVACTOR_QUANT_CALL(avx2) return;
  case quant_isa::generic: KVACTOR_QUANT_CALL(quant_generic) return;
  }
#undef KVACTOR_QUANT_CALL
}

} // namespace kvactor::model::layers
