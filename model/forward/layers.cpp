#include "model/forward/layers.hpp"

#include <algorithm>
#include <bit>
#include <vector>
#include <cmath>
#include <cstring>
#include <functional>

#include "base/assert.hpp"
#include "model/dtype.hpp"
#include "model/forward/linear_kernels.hpp"
#include "model/forward/pair_kernels.hpp"
#include "model/quant/quant_kernels.hpp"

namespace kvactor::model::layers {
namespace {

// Splits [0, n) into about `parts` ranges of whole `align` multiples.
struct split {
  int64_t n, step;
  split(int64_t total, int parts, int64_t align) : n(total) {
    const int64_t per = (total + parts - 1) / parts;
    step = std::max<int64_t>(align, (per + align - 1) / align * align);
  }
  int64_t num_parts() const { return (n + step - 1) / step; }
  int64_t begin(int64_t i) const { return i * step; }
  int64_t end(int64_t i) const { return std::min(n, (i + 1) * step); }
};

// Rows per task so that small batches stay on the calling thread.
void for_rows(kernels::thread_pool& pool, int64_t num_rows, int64_t row_cost,
              const std::function<void(int64_t, int64_t)>& fn) {
  constexpr int64_t min_work = 16384; // elements per task worth a hand-off
  const int64_t rows_per_task = std::max<int64_t>(1, min_work / std::max<int64_t>(row_cost, 1));
  const int64_t num_tasks = (num_rows + rows_per_task - 1) / rows_per_task;
  if (num_tasks <= 1) {
    fn(0, num_rows);
    return;
  }
  const split s(num_rows, static_cast<int>(std::min<int64_t>(num_tasks, 4 * pool.num_threads())),
                1);
  pool.parallel_for(s.num_parts(), [&](int64_t i) { fn(s.begin(i), s.end(i)); });
}

} // namespace

std::string products_name(packed_matrix::layout packing) {
  if (packing == packed_matrix::layout::pairs)
    return std::string("bf16 pairs ") + isa_name(pair_product_isas().front());
  return std::string("fixed-order ") + isa_name(fixed_order_isas().front());
}

std::string products_name(quant_format format) {
  std::string name(quant_name(format));
  name += " integer ";
  name += isa_name(quant_product_isa(1));
  if (quant_product_isa(16) != quant_product_isa(1)) {
    name += ", ";
    name += isa_name(quant_product_isa(16));
    name += " from 16 rows";
  }
  return name;
}

void embedding(kernels::thread_pool& pool, const weight_view& table, std::span<const int32_t> ids,
               float* out) {
  const int64_t h = table.cols();
  for_rows(pool, static_cast<int64_t>(ids.size()), h, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t id = ids[static_cast<std::size_t>(t)];
      KVACTOR_ASSERT(id >= 0 && id < table.rows(), "token id outside the embedding");
      float* row = out + t * h;
      if (table.quant) {
        const std::size_t row_bytes = quant_row_bytes(*table.quant, h);
        dequantize_row(*table.quant, table.blocks() + static_cast<std::size_t>(id) * row_bytes, h,
                       row);
      } else if (table.type == dtype::f32) {
        std::memcpy(row, table.f32() + id * h, static_cast<std::size_t>(h) * sizeof(float));
      } else {
        const uint16_t* src = table.bf16() + id * h;
        for (int64_t i = 0; i < h; ++i) row[i] = bf16_to_f32(src[i]);
      }
    }
  });
}

void rms_norm(kernels::thread_pool& pool, const float* x, int64_t ldx, float* out, int64_t ldo,
              int64_t num_rows, int64_t n, const float* weight, float eps) {
  for_rows(pool, num_rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* xr = x + r * ldx;
      float* o = out + r * ldo;
      float sum = 0.0f;
      for (int64_t i = 0; i < n; ++i) sum += xr[i] * xr[i];
      const float inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
      for (int64_t i = 0; i < n; ++i) o[i] = weight[i] * (xr[i] * inv);
    }
  });
}

void rms_norm_heads(kernels::thread_pool& pool, float* x, int64_t ldx, int64_t num_tokens,
                    int64_t num_heads, int64_t head_dim, const float* weight, float eps) {
  for_rows(pool, num_tokens, num_heads * head_dim, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      float* row = x + t * ldx;
      for (int64_t h = 0; h < num_heads; ++h) {
        float* v = row + h * head_dim;
        float sum = 0.0f;
        for (int64_t i = 0; i < head_dim; ++i) sum += v[i] * v[i];
        const float inv = 1.0f / std::sqrt(sum / static_cast<float>(head_dim) + eps);
        for (int64_t i = 0; i < head_dim; ++i) v[i] = weight[i] * (v[i] * inv);
      }
    }
  });
}

namespace {

// x rounded to bf16 into `out`: [pair_rows(m), cols] rows cols apart, the
// padding columns and rows zero.
// x: [m, n] rows ldx apart
void round_rows_to_bf16(kernels::thread_pool& pool, const float* x, int64_t ldx, int64_t m,
                        int64_t n, int64_t cols, std::vector<uint16_t>& out) {
  out.resize(static_cast<std::size_t>(pair_rows(m) * cols));
  to_bf16(pool, x, ldx, out.data(), cols, m, n);
  if (n < cols)
    for (int64_t r = 0; r < m; ++r) std::fill_n(out.data() + r * cols + n, cols - n, uint16_t{0});
  std::fill(out.begin() + m * cols, out.end(), uint16_t{0});
}

} // namespace

void linear(kernels::thread_pool& pool, const float* x, int64_t ldx, int64_t m,
            const packed_matrix& w, float* y, int64_t ldy, bool accumulate) {
  // NOTE: a part per pool thread, in whole blocks, keeps each thread
  // streaming its own slice of W once per call. Every output is computed
  // whole by one thread, so the split changes no sum.
  const split s(w.num_blocks(), pool.num_threads(), 1);
  std::function<void(int64_t)> part;
  // NOTE: the bf16 rows of x live as long as the calling thread (a stream's
  // worker), grown to the largest step once; the pool's threads get their
  // address (a thread_local named in the lambda would be their own).
  thread_local std::vector<uint16_t> x_bf16;
  if (w.packing() == packed_matrix::layout::pairs) {
    round_rows_to_bf16(pool, x, ldx, m, w.cols(), w.stored_cols(), x_bf16);
    const uint16_t* xb = x_bf16.data();
    const pair_isa isa = pair_product_isas().front();
    // NOTE: isa by value: part runs after this block has ended.
    part = [&, xb, isa](int64_t i) {
      pair_product(isa, xb, w.stored_cols(), m, w, s.begin(i), s.end(i) - s.begin(i), y, ldy,
                   accumulate);
    };
  } else {
    const product_isa isa = fixed_order_isas().front();
    part = [&, isa](int64_t i) {
      fixed_order_product(isa, x, ldx, m, w, s.begin(i), s.end(i) - s.begin(i), y, ldy, accumulate);
    };
  }
  if (s.num_parts() == 1) part(0);
  else pool.parallel_for(s.num_parts(), part);
}

void linear(kernels::thread_pool& pool, const float* x, int64_t ldx, int64_t m,
            const quantized_matrix& w, float* y, int64_t ldy, bool accumulate) {
  // NOTE: as the dense linear(): the calling thread's quantised rows, a part
  // of W's groups per pool thread, each output whole on one thread.
  thread_local quantized_rows x_q;
  x_q.resize(m, w.cols(), quant_block_values(w.format()));
  quantized_rows* xq = &x_q;
  for_rows(pool, m, w.cols(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) xq->quantize(i, x + i * ldx);
  });
  const split s(w.num_groups(), pool.num_threads(), 1);
  const quant_isa isa = quant_product_isa(m);
  const auto part = [&](int64_t i) {
    quant_product(isa, *xq, m, w, s.begin(i), s.end(i) - s.begin(i), y, ldy, accumulate);
  };
  if (s.num_parts() == 1) part(0);
  else pool.parallel_for(s.num_parts(), part);
}

void rope(kernels::thread_pool& pool, float* x, int64_t ldx, int64_t num_tokens, int64_t num_heads,
          int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for_rows(pool, num_tokens, num_heads * head_dim, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const float* c = cos + t * half;
      const float* s = sin + t * half;
      for (int64_t h = 0; h < num_heads; ++h) {
        float* v = x + t * ldx + h * head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = v[i], x2 = v[i + half];
          v[i] = x1 * c[i] - x2 * s[i];
          v[i + half] = x2 * c[i] + x1 * s[i];
        }
      }
    }
  });
}

void rope_angles(std::span<const int32_t> positions, std::span<const double> inv_freq, float* cos,
                 float* sin) {
  const std::size_t half = inv_freq.size();
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const double a = positions[t] * inv_freq[i];
      cos[t * half + i] = static_cast<float>(std::cos(a));
      sin[t * half + i] = static_cast<float>(std::sin(a));
    }
}

void swiglu(kernels::thread_pool& pool, const float* gate, const float* up, int64_t ld, float* out,
            int64_t ldo, int64_t num_tokens, int64_t n) {
  for_rows(pool, num_tokens, n, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t)
      for (int64_t i = 0; i < n; ++i) {
        const float g = gate[t * ld + i];
        out[t * ldo + i] = g / (1.0f + std::exp(-g)) * up[t * ld + i];
      }
  });
}

void add_bias(kernels::thread_pool& pool, float* y, int64_t ldy, int64_t num_rows, int64_t n,
              const float* bias) {
  for_rows(pool, num_rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t i = 0; i < n; ++i) y[r * ldy + i] += bias[i];
  });
}

void to_bf16(kernels::thread_pool& pool, const float* x, int64_t ldx, uint16_t* out, int64_t ldo,
             int64_t num_rows, int64_t n) {
  for_rows(pool, num_rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t i = 0; i < n; ++i) out[r * ldo + i] = f32_to_bf16(x[r * ldx + i]);
  });
}

void from_bf16(kernels::thread_pool& pool, const uint16_t* x, int64_t ldx, float* out, int64_t ldo,
               int64_t num_rows, int64_t n) {
  for_rows(pool, num_rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t i = 0; i < n; ++i) out[r * ldo + i] = bf16_to_f32(x[r * ldx + i]);
  });
}

} // namespace kvactor::model::layers
