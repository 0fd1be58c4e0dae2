// Which fixed-order kernel a CPU runs, and the call through it.
#include "model/forward/linear_kernels.hpp"

#include <array>

#include "kernels/assert.hpp"
#include "model/forward/linear_isa.hpp"

namespace kvactor::model::layers {

std::span<const product_isa> fixed_order_isas() {
  static const auto isas = [] {
    struct found {
      std::array<product_isa, 2> isa{};
      std::size_t size = 0;
    } f;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
      f.isa[f.size++] = product_isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f.isa[f.size++] = product_isa::avx2;
    return f;
  }();
  return {isas.isa.data(), isas.size};
}

const char* isa_name(product_isa isa) {
  switch (isa) {
  case product_isa::avx512: return "avx512";
  case product_isa::avx2: return "avx2";
  }
  return "?";
}

namespace {

template <class T>
void dispatch(product_isa isa, const float* x, std::int64_t ldx, std::int64_t m, const T* w, std::int64_t n,
              std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch) {
  bool supported = false;
  for (product_isa i : fixed_order_isas()) supported = supported || i == isa;
  KVACTOR_ASSERT(supported, "fixed-order kernel not supported by this CPU");
  if (isa == product_isa::avx512) avx512::product(x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
  else avx2::product(x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
}

} // namespace

void fixed_order_product(product_isa isa, const float* x, std::int64_t ldx, std::int64_t m, const float* w,
                         std::int64_t n, std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch) {
  dispatch(isa, x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
}

void fixed_order_product(product_isa isa, const float* x, std::int64_t ldx, std::int64_t m, const std::uint16_t* w,
                         std::int64_t n, std::int64_t k, float* y, std::int64_t ldy, bool accumulate, float* scratch) {
  dispatch(isa, x, ldx, m, w, n, k, y, ldy, accumulate, scratch);
}

} // namespace kvactor::model::layers
