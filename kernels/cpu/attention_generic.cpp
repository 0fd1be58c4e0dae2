// Portable row primitives (the compiler vectorises for the baseline ISA).
#include "kernels/cpu/attention_isa.hpp"
#include "kernels/cpu/attention_task.hpp"
#include "kernels/dtype.hpp"

namespace kvactor::kernels::cpu::detail {
namespace {

struct generic_ops {
  static void load_row(dtype t, const void* src, float* dst, int32_t n) {
    for (int32_t i = 0; i < n; ++i) dst[i] = load_as_float(t, src, static_cast<size_t>(i));
  }
  static float dot(const float* a, const float* b, int32_t n) {
    // NOTE: 8 partial sums let the compiler vectorise without -ffast-math.
    float part[8] = {};
    int32_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int32_t j = 0; j < 8; ++j) part[j] += a[i + j] * b[i + j];
    float sum = 0.0f;
    for (; i < n; ++i) sum += a[i] * b[i];
    for (float x : part) sum += x;
    return sum;
  }
  static void axpy(float a, const float* x, float* y, int32_t n) {
    for (int32_t i = 0; i < n; ++i) y[i] += a * x[i];
  }
  static void scale(float a, float* y, int32_t n) {
    for (int32_t i = 0; i < n; ++i) y[i] *= a;
  }
  static void store_row(dtype t, const float* src, float a, void* dst, int32_t n) {
    for (int32_t i = 0; i < n; ++i) store_from_float(t, dst, static_cast<size_t>(i), a * src[i]);
  }
};

} // namespace

void attention_task_generic(const paged_attention_params& p, int64_t token, int32_t seq,
                            int32_t num_keys, int32_t kv_head, float* scratch) {
  attention_task<generic_ops>(p, token, seq, num_keys, kv_head, scratch);
}

} // namespace kvactor::kernels::cpu::detail
