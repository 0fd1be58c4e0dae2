// Activations quantised row by row, which integer kernel a CPU runs, and
// the call through it.
#include "model/quant/quant_kernels.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/assert.hpp"
#include "model/quant/quant_isa.hpp"
#include "model/tile_data.hpp"

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
    std::array<quant_isa, 5> isa{};
    std::size_t size = 0;
  };
  static const found isas = [] {
    found f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-int8") &&
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("f16c") &&
        os_grants_tile_data())
      f.isa[f.size++] = quant_isa::amx_int8;
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

namespace {
std::atomic<int> forced_isa{-1}; // a quant_isa, or -1: none forced
} // namespace

void force_quant_product_isa(std::optional<quant_isa> isa) {
  if (isa) {
    const std::span<const quant_isa> isas = quant_product_isas();
    KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), *isa) != isas.end(),
                   "forcing an integer kernel this CPU does not run");
  }
  forced_isa.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

quant_isa quant_product_isa(int64_t m) {
  if (const int forced = forced_isa.load(std::memory_order_relaxed); forced >= 0)
    return static_cast<quant_isa>(forced);
  const std::span<const quant_isa> isas = quant_product_isas();
  // NOTE: a tile's 16 rows cost the same however few are x's; below one
  // full tile the vector kernels' row tiles waste nothing. Where AMX starts
  // to pay is not measured yet (kvactor-bench-quant on an AMX machine).
  if (isas.front() == quant_isa::amx_int8 && m < 16) return isas[1];
  return isas.front();
}

const char* isa_name(quant_isa isa) {
  switch (isa) {
  case quant_isa::amx_int8: return "amx_int8";
  case quant_isa::generic: return "generic";
  case quant_isa::avx_vnni: return "avx_vnni";
  case quant_isa::avx2: return "avx2";
  case quant_isa::avx512_vnni: return "avx512_vnni";
  }
  return "?";
}

uint8_t* quant_scratch(int64_t bytes) {
  // NOTE: 64 bytes over, so that the returned start can be aligned.
  thread_local std::vector<uint8_t> scratch;
  const auto want = static_cast<std::size_t>(bytes) + 64;
  if (scratch.size() < want) scratch.resize(want);
  const auto address = reinterpret_cast<std::uintptr_t>(scratch.data());
  return scratch.data() + ((64 - address % 64) % 64);
}

namespace {

const quant_products& products_of(quant_isa isa) {
  switch (isa) {
  case quant_isa::amx_int8: return amx_int8::products;
  case quant_isa::avx512_vnni: return avx512_vnni::products;
  case quant_isa::avx_vnni: return avx_vnni::products;
  case quant_isa::avx2: return avx2::products;
  case quant_isa::generic: return quant_generic::products;
  }
  return quant_generic::products;
}

} // namespace

void quant_product(quant_isa isa, const quantized_rows& x, int64_t m, const quantized_matrix& w,
                   int64_t first_group, int64_t num_groups, float* y, int64_t ldy,
                   bool accumulate) {
  const std::span<const quant_isa> isas = quant_product_isas();
  KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), isa) != isas.end(),
                 "integer kernel not supported by this CPU");
  quant_product_through(products_of(isa), x, m, w, first_group, num_groups, y, ldy, accumulate);
}

void quant_product_through(const quant_products& kernel, const quantized_rows& x, int64_t m,
                           const quantized_matrix& w, int64_t first_group, int64_t num_groups,
                           float* y, int64_t ldy, bool accumulate) {
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
  const quant_product_fn product = kernel.of[static_cast<std::size_t>(w.format())];
  product(xv, m, wg, n, yg, ldy, accumulate);
}

} // namespace kvactor::model::layers
