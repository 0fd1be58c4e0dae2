// The sampler's row passes in portable C++ (row_ops.hpp): any x86-64 CPU.
#include "model/sampling/row_ops_isa.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace kvactor::model::sampling::generic {

namespace {

float exp_nonpositive(float x) {
  namespace e = exp_poly;
  if (!(x >= e::min_arg)) // NaN, -inf and what would underflow
    return 0.0f;
  // NOTE: adding and taking away 1.5 * 2^23 rounds to the nearest integer
  // (|x * log2e| < 2^22), in plain arithmetic the compiler can vectorise.
  constexpr float round_shift = 12582912.0f;
  const float n = (x * e::log2e + round_shift) - round_shift;
  float r = x - n * e::ln2_hi;
  r = r - n * e::ln2_lo;
  float p = e::c[0];
  for (int i = 1; i < 6; ++i)
    p = p * r + e::c[i];
  p = p * (r * r) + (r + 1.0f);
  // NOTE: n lies in [-126, 0], so 2^n is a normal float.
  return p * std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
}

bool at_or_above(float w, int64_t i, row_cut cut) {
  return w > cut.w || (w == cut.w && i <= cut.id);
}

} // namespace

float max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    if (x[i] > m)
      m = x[i];
  return m;
}

float weights(const float* x, int64_t n, float max_x, float scale, float* w, float* block_sums) {
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    float sum = 0;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (int64_t i = b * row_block; i < end; ++i) {
      w[i] = exp_nonpositive((x[i] - max_x) * scale);
      sum += w[i];
    }
    block_sums[b] = sum;
    total += sum;
  }
  return total;
}

double sum_exp(const float* x, int64_t n, float max_x) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += exp_nonpositive(x[i] - max_x);
  return sum;
}

row_measure at_least(const float* w, int64_t n, float at) {
  // NOTE: without branches: whether w[i] >= at is as good as random. Each
  // block sums in float, the blocks in double.
  row_measure m;
  for (int64_t b = 0; b * row_block < n; ++b) {
    float mass = 0;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (int64_t i = b * row_block; i < end; ++i) {
      const bool in = w[i] >= at;
      mass += in ? w[i] : 0.0f;
      m.count += in;
    }
    m.mass += mass;
  }
  return m;
}

float kept_sums(const float* w, int64_t n, row_cut cut, float* block_sums) {
  float total = 0;
  for (int64_t b = 0; b * row_block < n; ++b) {
    float sum = 0;
    const int64_t end = std::min(n, (b + 1) * row_block);
    for (int64_t i = b * row_block; i < end; ++i)
      sum += at_or_above(w[i], i, cut) ? w[i] : 0.0f;
    block_sums[b] = sum;
    total += sum;
  }
  return total;
}

int64_t next_at_least(const float* x, int64_t from, int64_t n, float at) {
  for (int64_t i = from; i < n; ++i)
    if (x[i] >= at)
      return i;
  return n;
}

int64_t next_in(const float* x, int64_t from, int64_t n, float lo, float hi) {
  for (int64_t i = from; i < n; ++i)
    if (x[i] >= lo && x[i] < hi)
      return i;
  return n;
}

int64_t gather(const float* w, int64_t n, float lo, float hi, float* out_w, int32_t* out_id) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    if (w[i] >= lo && w[i] < hi) {
      out_w[count] = w[i];
      out_id[count++] = static_cast<int32_t>(i);
    }
  return count;
}

} // namespace kvactor::model::sampling::generic
