#pragma once
// row_ops: the passes the sampler makes over one row of a step's logits,
// each O(vocabulary) and vectorised, in one translation unit per
// instruction set (row_ops_avx512.cpp, row_ops_avx2.cpp,
// row_ops_generic.cpp); row_isas()
// says which this CPU runs, best first, and row_ops_for() gives its table.
//
// Every pass sums in one fixed order for a given instruction set, so a
// row's result depends on the row alone, never on the batch around it.

#include <cstdint>
#include <span>

namespace kvactor::model::sampling {

// Elements per block of a row's block sums: the draw walks the blocks' sums,
// then one block.
inline constexpr int64_t row_block = 1024;
// What gather's output buffers hold beyond n: it may write a whole vector.
inline constexpr int64_t row_slack = 16;
constexpr int64_t num_row_blocks(int64_t n) {
  return (n + row_block - 1) / row_block;
}

// A place in the order the filters keep tokens by: weight descending, then
// id ascending. An element is at or above the cut when its weight is
// greater than the cut's, or equal to it with an id not greater.
struct row_cut {
  float w = 0.0f;
  int32_t id = -1; // {0, -1}: every element of positive weight
};

// How much of a row lies at or above a weight.
struct row_measure {
  double mass = 0;
  int64_t count = 0;
};

struct row_ops {
  // The largest element; NaN is skipped; -inf when none is a number.
  float (*max)(const float* x, int64_t n);
  // w[i] = exp((x[i] - max_x) * scale), 0 for NaN, -inf and whatever
  // underflows; block_sums[b] = the sum of block b of w; returns the sum of
  // the block sums. scale > 0, max_x finite and >= every x[i].
  float (*weights)(const float* x, int64_t n, float max_x, float scale, float* w,
                   float* block_sums);
  // Sum of exp(x[i] - max_x) over the row (0 for NaN and -inf), in double.
  double (*sum_exp)(const float* x, int64_t n, float max_x);
  // The mass and count of the elements w[i] >= at.
  row_measure (*at_least)(const float* w, int64_t n, float at);
  // block_sums[b] = the sum of block b's elements at or above `cut`;
  // returns their total.
  float (*kept_sums)(const float* w, int64_t n, row_cut cut, float* block_sums);
  // The first index i in [from, n) with x[i] >= at, or n.
  int64_t (*next_at_least)(const float* x, int64_t from, int64_t n, float at);
  // The first index i in [from, n) with lo <= x[i] < hi, or n.
  int64_t (*next_in)(const float* x, int64_t from, int64_t n, float lo, float hi);
  // Writes the elements lo <= w[i] < hi, in index order, to out_w and their
  // indices to out_id (each room for n + row_slack); returns how many.
  int64_t (*gather)(const float* w, int64_t n, float lo, float hi, float* out_w, int32_t* out_id);
};

enum class row_isa : uint8_t { generic, avx2, avx512 };

std::span<const row_isa> row_isas(); // this CPU's, best first; generic always
const char* isa_name(row_isa isa);
const row_ops& row_ops_for(row_isa isa); // isa must be one of row_isas()
const row_ops& best_row_ops();

// exp(x) for x <= 0 on [-87, 0] (0 below), within 2 ulp: the polynomial every
// instruction set evaluates (Cody-Waite reduction by ln 2, then 1 + r + r^2 P(r)
// with P of degree 5).
namespace exp_poly {
inline constexpr float min_arg = -87.0f;
inline constexpr float log2e = 1.44269504088896341f;
inline constexpr float ln2_hi = 0.693359375f;
inline constexpr float ln2_lo = -2.12194440e-4f;
inline constexpr float c[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
} // namespace exp_poly

} // namespace kvactor::model::sampling
