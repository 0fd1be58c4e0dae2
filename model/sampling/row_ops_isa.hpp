#pragma once
// Entry points of the per-ISA translation units of the sampler's row passes
// (row_ops.hpp says what each does; row_ops.cpp dispatches).

#include "model/sampling/row_ops.hpp"

#include <algorithm>

namespace kvactor::model::sampling {

#define KVACTOR_ROW_OPS                                                                            \
  float max(const float* x, int64_t n);                                                            \
  float weights(const float* x, int64_t n, float max_x, float scale, float* w, float* block_sums); \
  double sum_exp(const float* x, int64_t n, float max_x);                                          \
  row_measure at_least(const float* w, int64_t n, float at);                                       \
  float kept_sums(const float* w, int64_t n, row_cut cut, float* block_sums);                      \
  int64_t next_at_least(const float* x, int64_t from, int64_t n, float at);                        \
  int64_t next_in(const float* x, int64_t from, int64_t n, float lo, float hi);                    \
  int64_t gather(const float* w, int64_t n, float lo, float hi, float* out_w, int32_t* out_id);

// Requires AVX-512 F (row_ops.cpp checks the CPU).
namespace avx512 {
KVACTOR_ROW_OPS
}
// Requires AVX2 and FMA.
namespace avx2 {
KVACTOR_ROW_OPS
}
// Any x86-64 CPU.
namespace generic {
KVACTOR_ROW_OPS
}

#undef KVACTOR_ROW_OPS

} // namespace kvactor::model::sampling
