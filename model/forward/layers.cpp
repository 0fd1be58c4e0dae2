#include "model/forward/layers.hpp"

#include <algorithm>
#include <bit>
#include <vector>
#include <cmath>
#include <cstring>
#include <functional>

#include <cblas.h>
#include <cstdlib>

// OpenBLAS's DYNAMIC_ARCH entry points (not in cblas.h); weak, so a build
// against an OpenBLAS without them still links and keeps its own choice.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

#include "kernels/assert.hpp"
#include "model/forward/linear_kernels.hpp"

namespace kvactor::model::layers {
namespace {

// Splits [0, n) into about `parts` ranges of whole `align` multiples.
struct split {
  std::int64_t n, step;
  split(std::int64_t total, int parts, std::int64_t align) : n(total) {
    const std::int64_t per = (total + parts - 1) / parts;
    step = std::max<std::int64_t>(align, (per + align - 1) / align * align);
  }
  std::int64_t num_parts() const { return (n + step - 1) / step; }
  std::int64_t begin(std::int64_t i) const { return i * step; }
  std::int64_t end(std::int64_t i) const { return std::min(n, (i + 1) * step); }
};

// Rows per task so that small batches stay on the calling thread.
void for_rows(kernels::thread_pool& pool, std::int64_t num_rows, std::int64_t row_cost,
              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  constexpr std::int64_t min_work = 16384; // elements per task worth a hand-off
  const std::int64_t rows_per_task = std::max<std::int64_t>(1, min_work / std::max<std::int64_t>(row_cost, 1));
  const std::int64_t num_tasks = (num_rows + rows_per_task - 1) / rows_per_task;
  if (num_tasks <= 1) {
    fn(0, num_rows);
    return;
  }
  const split s(num_rows, static_cast<int>(std::min<std::int64_t>(num_tasks, 4 * pool.num_threads())), 1);
  pool.parallel_for(s.num_parts(), [&](std::int64_t i) { fn(s.begin(i), s.end(i)); });
}

} // namespace

const char* configure_blas() {
  static const char* core = [] {
    // NOTE: the CPU device's pool already has a thread per core; OpenBLAS's
    // own threads would compete with it (and spin after each call), so BLAS
    // runs single-threaded and linear() splits the output columns over the pool.
    openblas_set_num_threads(1);
    // NOTE: OpenBLAS 0.3.21 (Debian 12) does not recognise this host's Xeon
    // ("Intel(R) Xeon(R) Processor", AVX-512, AMX) and picks its generic
    // Prescott (SSE3) kernels: measured 16 GFLOP/s per core for sgemm
    // 64x1536x512, against 73 with the SkylakeX kernels. Its DYNAMIC_ARCH
    // build re-reads OPENBLAS_CORETYPE when re-initialised.
    const char* name = openblas_get_corename();
    const bool fallback = name != nullptr && std::strcmp(name, "Prescott") == 0;
    if (fallback && std::getenv("OPENBLAS_CORETYPE") == nullptr && gotoblas_dynamic_init != nullptr &&
        gotoblas_dynamic_quit != nullptr) {
      const char* better = nullptr;
      if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        better = "SkylakeX";
      else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        better = "Haswell";
      if (better != nullptr) {
        ::setenv("OPENBLAS_CORETYPE", better, 0);
        gotoblas_dynamic_quit();
        gotoblas_dynamic_init();
        ::unsetenv("OPENBLAS_CORETYPE");
      }
    }
    return openblas_get_corename();
  }();
  return core;
}

std::string products_name() {
  const std::span<const product_isa> isas = fixed_order_isas();
  std::string name = isas.empty() ? "OpenBLAS " : "fixed-order ";
  name += isas.empty() ? configure_blas() : isa_name(isas.front());
  return name;
}

void embedding(kernels::thread_pool& pool, const weight_view& table, std::span<const std::int32_t> ids, float* out) {
  const std::int64_t h = table.cols();
  for_rows(pool, static_cast<std::int64_t>(ids.size()), h, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      const std::int64_t id = ids[static_cast<std::size_t>(t)];
      KVACTOR_ASSERT(id >= 0 && id < table.rows(), "token id outside the embedding");
      float* row = out + t * h;
      if (table.type == dtype::f32) {
        std::memcpy(row, table.f32() + id * h, static_cast<std::size_t>(h) * sizeof(float));
      } else {
        const std::uint16_t* src = table.bf16() + id * h;
        for (std::int64_t i = 0; i < h; ++i) row[i] = bf16_to_f32(src[i]);
      }
    }
  });
}

void rms_norm(kernels::thread_pool& pool, const float* x, std::int64_t ldx, float* out, std::int64_t ldo,
              std::int64_t num_rows, std::int64_t n, const float* weight, float eps) {
  for_rows(pool, num_rows, n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float* xr = x + r * ldx;
      float* o = out + r * ldo;
      float sum = 0.0f;
      for (std::int64_t i = 0; i < n; ++i) sum += xr[i] * xr[i];
      const float inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
      for (std::int64_t i = 0; i < n; ++i) o[i] = weight[i] * (xr[i] * inv);
    }
  });
}

void rms_norm_heads(kernels::thread_pool& pool, float* x, std::int64_t ldx, std::int64_t num_tokens,
                    std::int64_t num_heads, std::int64_t head_dim, const float* weight, float eps) {
  for_rows(pool, num_tokens, num_heads * head_dim, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      float* row = x + t * ldx;
      for (std::int64_t h = 0; h < num_heads; ++h) {
        float* v = row + h * head_dim;
        float sum = 0.0f;
        for (std::int64_t i = 0; i < head_dim; ++i) sum += v[i] * v[i];
        const float inv = 1.0f / std::sqrt(sum / static_cast<float>(head_dim) + eps);
        for (std::int64_t i = 0; i < head_dim; ++i) v[i] = weight[i] * (v[i] * inv);
      }
    }
  });
}

namespace {

// Rows of a bf16 W widened per panel: 48 rows x k <= 1536 is <= 288 KiB of
// fp32, which stays in L2 while sgemm reads it.
constexpr std::int64_t bf16_panel_rows = 48;

// bf16 -> f32 is a 16-bit shift (exact); the loop vectorises.
void widen_bf16(const std::uint16_t* src, float* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(static_cast<std::uint32_t>(src[i]) << 16);
}

void sgemm_nt(const float* x, std::int64_t ldx, std::int64_t m, const float* w, std::int64_t n, std::int64_t k,
              float beta, float* y, std::int64_t ldy) {
  if (m == 1) {
    // NOTE: OpenBLAS 0.3.21 (SkylakeX kernels) reads W at 6.4 GB/s through
    // sgemm with m = 1 but 23.5 GB/s through sgemv (1536x512, one core).
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, w,
                static_cast<blasint>(k), x, 1, beta, y, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(ldx), w, static_cast<blasint>(k), beta, y,
              static_cast<blasint>(ldy));
}

} // namespace

void linear(kernels::thread_pool& pool, const float* x, std::int64_t ldx, std::int64_t m, const weight_view& w,
            float* y, std::int64_t ldy, bool accumulate) {
  KVACTOR_ASSERT(w.type == dtype::f32 || w.type == dtype::bf16, "the CPU forward pass takes fp32 or bf16 matrices");
  const std::int64_t n = w.rows();
  const std::int64_t k = w.cols();
  // NOTE: columns in multiples of 16 rows of W; a part per pool thread keeps
  // each thread streaming its own slice of the weight once per call. Every
  // output is computed whole by one thread, so the split changes no sum.
  const split s(n, pool.num_threads(), 16);
  const std::span<const product_isa> isas = fixed_order_isas();
  auto part = [&](std::int64_t i) {
    const std::int64_t b = s.begin(i), e = s.end(i);
    if (!isas.empty()) {
      // The packed panel of W; grows once per thread, never shrinks.
      thread_local std::vector<float> scratch;
      if (m > fixed_order_small_rows)
        scratch.resize(std::max<std::size_t>(scratch.size(), static_cast<std::size_t>(fixed_order_panel_rows * k)));
      if (w.type == dtype::f32)
        fixed_order_product(isas.front(), x, ldx, m, w.f32() + b * k, e - b, k, y + b, ldy, accumulate, scratch.data());
      else
        fixed_order_product(isas.front(), x, ldx, m, w.bf16() + b * k, e - b, k, y + b, ldy, accumulate, scratch.data());
      return;
    }
    // Without AVX2 and FMA: OpenBLAS, whose summation order depends on m
    // (not batch-invariant; see model/README.md).
    const float beta = accumulate ? 1.0f : 0.0f;
    if (w.type == dtype::f32) {
      sgemm_nt(x, ldx, m, w.f32() + b * k, e - b, k, beta, y + b, ldy);
      return;
    }
    // NOTE: bf16 weights stay bf16 in memory (half the bytes a decode step
    // reads); each panel is widened exactly into a per-thread fp32 buffer
    // that sgemm then reads from L2. Grows once, never shrinks.
    thread_local std::vector<float> panel;
    panel.resize(std::max<std::size_t>(panel.size(), static_cast<std::size_t>(bf16_panel_rows * k)));
    for (std::int64_t r = b; r < e; r += bf16_panel_rows) {
      const std::int64_t rows = std::min(bf16_panel_rows, e - r);
      widen_bf16(w.bf16() + r * k, panel.data(), rows * k);
      sgemm_nt(x, ldx, m, panel.data(), rows, k, beta, y + r, ldy);
    }
  };
  if (s.num_parts() == 1) part(0);
  else pool.parallel_for(s.num_parts(), part);
}

void rope(kernels::thread_pool& pool, float* x, std::int64_t ldx, std::int64_t num_tokens, std::int64_t num_heads,
          std::int64_t head_dim, const float* cos, const float* sin) {
  const std::int64_t half = head_dim / 2;
  for_rows(pool, num_tokens, num_heads * head_dim, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      const float* c = cos + t * half;
      const float* s = sin + t * half;
      for (std::int64_t h = 0; h < num_heads; ++h) {
        float* v = x + t * ldx + h * head_dim;
        for (std::int64_t i = 0; i < half; ++i) {
          const float x1 = v[i], x2 = v[i + half];
          v[i] = x1 * c[i] - x2 * s[i];
          v[i + half] = x2 * c[i] + x1 * s[i];
        }
      }
    }
  });
}

void rope_angles(std::span<const std::int32_t> positions, std::span<const double> inv_freq, float* cos, float* sin) {
  const std::size_t half = inv_freq.size();
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const double a = positions[t] * inv_freq[i];
      cos[t * half + i] = static_cast<float>(std::cos(a));
      sin[t * half + i] = static_cast<float>(std::sin(a));
    }
}

void swiglu(kernels::thread_pool& pool, const float* gate, const float* up, float* out, std::int64_t num_tokens,
            std::int64_t n) {
  for_rows(pool, num_tokens, n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b * n; i < e * n; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
  });
}

} // namespace kvactor::model::layers
