// Which of the sampler's row passes a CPU runs (row_ops.hpp).
#include "model/sampling/row_ops.hpp"

#include <algorithm>
#include <array>

#include "base/assert.hpp"
#include "model/sampling/row_ops_isa.hpp"

namespace kvactor::model::sampling {

namespace {

#define KVACTOR_ROW_OPS_TABLE(ns)                                                                  \
  row_ops {                                                                                        \
    ns::max, ns::weights, ns::sum_exp, ns::at_least, ns::kept_sums, ns::next_at_least,             \
      ns::next_in, ns::gather                                                                      \
  }

const row_ops generic_ops = KVACTOR_ROW_OPS_TABLE(generic);
const row_ops avx2_ops = KVACTOR_ROW_OPS_TABLE(avx2);
const row_ops avx512_ops = KVACTOR_ROW_OPS_TABLE(avx512);

#undef KVACTOR_ROW_OPS_TABLE

} // namespace

std::span<const row_isa> row_isas() {
  struct found {
    std::array<row_isa, 3> isa{};
    std::size_t size = 0;
  };
  static const found isas = [] {
    found f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      f.isa[f.size++] = row_isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      f.isa[f.size++] = row_isa::avx2;
    f.isa[f.size++] = row_isa::generic;
    return f;
  }();
  return {isas.isa.data(), isas.size};
}

const char* isa_name(row_isa isa) {
  switch (isa) {
    case row_isa::avx512: return "avx512";
    case row_isa::avx2: return "avx2";
    case row_isa::generic: return "generic";
  }
  return "?";
}

const row_ops& row_ops_for(row_isa isa) {
  const std::span<const row_isa> isas = row_isas();
  KVACTOR_ASSERT(std::find(isas.begin(), isas.end(), isa) != isas.end(),
                 "row_ops_for: an instruction set this CPU lacks");
  switch (isa) {
    case row_isa::avx512: return avx512_ops;
    case row_isa::avx2: return avx2_ops;
    case row_isa::generic: break;
  }
  return generic_ops;
}

const row_ops& best_row_ops() {
  static const row_ops& best = row_ops_for(row_isas().front());
  return best;
}

} // namespace kvactor::model::sampling
