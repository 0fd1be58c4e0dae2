// Which bf16 pair kernel a CPU runs, and the call through one.
#include "model/forward/pair_kernels.hpp"

#include <algorithm>
#include <array>

#include "base/assert.hpp"
#include "model/forward/pair_isa.hpp"
#include "model/tile_data.hpp"

namespace kvactor::model::layers {

std::span<const pair_isa> pair_product_isas() {
  struct found {
    std::array<pair_isa, 3> isa{};
    std::size_t size = 0;
  };
  static const found isas = [] {
    found f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16") &&
        os_grants_tile_data())
      f.isa[f.size++] = pair_isa::amx;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16"))
      f.isa[f.size++] = pair_isa::avx512_bf16;
    f.isa[f.size++] = pair_isa::generic;
    return f;
  }();
  return {isas.isa.data(), isas.size};
}

const char* isa_name(pair_isa isa) {
  switch (isa) {
  case pair_isa::generic: return "generic";
  case pair_isa::avx512_bf16: return "avx512_bf16";
  case pair_isa::amx: return "amx";
  }
  return "?";
}

int64_t pair_rows(int64_t m) { return (m + 15) / 16 * 16; }

void pair_product(pair_isa isa, const uint16_t* x, int64_t ldx, int64_t m, const packed_matrix& w,
                  int64_t first_block, int64_t num_blocks, float* y, int64_t ldy, bool accumulate) {
  const std::span<const pair_isa> isas = pair_product_isas();
  KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), isa) != isas.end(),
                 "pair kernel not supported by this CPU");
  KVACTOR_ASSERT(w.packing() == packed_matrix::layout::pairs, "pair products need the pair layout");
  KVACTOR_ASSERT(first_block >= 0 && num_blocks >= 0 && first_block + num_blocks <= w.num_blocks(),
                 "blocks outside the packed matrix");
  KVACTOR_ASSERT(ldx >= w.stored_cols(), "x rows shorter than W's stored columns");
  constexpr int64_t rows = packed_matrix::block_rows;
  const int64_t n = std::min(w.rows(), (first_block + num_blocks) * rows) - first_block * rows;
  if (m <= 0 || n <= 0) return;
  const uint16_t* wb = w.bf16_blocks(first_block);
  float* yb = y + first_block * rows;
  const int64_t k = w.stored_cols();
  switch (isa) {
  case pair_isa::amx: amx::product(x, ldx, m, wb, k, n, yb, ldy, accumulate); return;
  case pair_isa::avx512_bf16:
    avx512_bf16::product(x, ldx, m, wb, k, n, yb, ldy, accumulate);
    return;
  case pair_isa::generic: pair_generic::product(x, ldx, m, wb, k, n, yb, ldy, accumulate); return;
  }
}

} // namespace kvactor::model::layers
