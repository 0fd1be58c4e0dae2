#pragma once
// The sampler on the device: a step's sampled rows turned into tokens (and
// the log probabilities asked for) where the logits are, so that only a few
// bytes per row come back to the host. Each kernel takes one block per
// row; a row's result depends on its logits, its sample_row and its edits
// only, never on the other rows (every sum runs in one fixed order).
//
//   logprobs_kernel  log sum exp of the unchanged row and its most likely
//                    tokens (rows with num_logprobs >= 0)
//   adjust_kernel    the row's logit edits, in place (bias, min_tokens bans,
//                    penalties), each edit keeping the logit it found
//   sample_kernel    greedy, or a draw after temperature, min-p, top-k and
//                    top-p, with the same meaning as the CPU sampler
//                    (model/sampler.hpp): weights exp((x - max) / T), a cut
//                    in the order (weight descending, id ascending), the
//                    draw walking the kept weights in id order
//
// No sort of the vocabulary: a filter's cut is found by a search over the
// weights' float bits, sample_ways thresholds per pass over the row (about
// ten passes from 0 to 1), then the ties at the cut are counted in id order.
// Written once: nvcc compiles them (model/cuda/model_kernels.cu); the
// emulator runs the same source in tests/model/emulated_sample_ops_test.cpp
// against the CPU sampler.

#include "kernels/cuda/compat.cuh"
#include "kernels/cuda/sample_rows.hpp"

namespace kvactor::kernels::gpu {

// Threads per row: the launchers take sample_threads; the emulator tests
// also run fewer, the code being the same. The kernels of THREADS threads
// carry __launch_bounds__(THREADS): a block of 1024 threads has at most 64
// registers per thread, and without the bound ptxas may take more (the
// launch would fail), where with it it spills (model_ptxas_no_spills).
constexpr int sample_threads = 1024;
constexpr int sample_ways = 8; // thresholds tried per search pass
constexpr int edit_threads = 128;

__device__ __forceinline__ float float_of_bits(uint32_t b) {
#if defined(__CUDACC__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, 4);
  return f;
#endif
}

__device__ __forceinline__ uint32_t bits_of_float(float f) {
#if defined(__CUDACC__)
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
#endif
}

// A place in the order (weight descending, id ascending): an element is
// kept when its weight is positive and greater than the cut's, or equal to
// it with an id not greater. {0, -1}: every element of positive weight.
struct sample_cut {
  float w;
  int32_t id;
};

__device__ __forceinline__ bool is_kept(float w, int32_t i, sample_cut c) {
  return w > 0.0f && (w > c.w || (w == c.w && i <= c.id));
}

// A row's weights exp((x - max) * inv_t); 0 for NaN, -inf and underflow.
struct row_weights {
  const float* x;
  int32_t n;
  float max;
  float inv_t;
  __device__ __forceinline__ float operator()(int32_t i) const {
    const float v = x[i];
    return v == v ? expf((v - max) * inv_t) : 0.0f;
  }
};

// The block's sums of W values per thread; every thread gets them, summed
// in one fixed order. scratch: [(THREADS / warp_size) * W].
template <int THREADS, int W>
__device__ __forceinline__ void block_sums(double (&v)[W], double* scratch) {
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  KVACTOR_UNROLL
  for (int j = 0; j < W; ++j) {
    KVACTOR_UNROLL
    for (int m = 16; m > 0; m >>= 1) v[j] += __shfl_xor_sync(0xffffffffu, v[j], m);
    if (lane == 0) scratch[warp * W + j] = v[j];
  }
  __syncthreads();
  KVACTOR_UNROLL
  for (int j = 0; j < W; ++j) {
    double s = 0;
    for (int w = 0; w < (THREADS / warp_size); ++w) s += scratch[w * W + j];
    v[j] = s;
  }
  __syncthreads();
}

// The block's best (value, index): the largest value, the lowest index on
// ties; every thread gets it. scratch: [(THREADS / warp_size)] each.
struct value_at {
  float v;
  int32_t i;
};

__device__ __forceinline__ value_at better(value_at a, value_at b) {
  return b.v > a.v || (b.v == a.v && b.i < a.i) ? b : a;
}

template <int THREADS>
__device__ __forceinline__ value_at block_best(value_at v, float* sv, int32_t* si) {
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  KVACTOR_UNROLL
  for (int m = 16; m > 0; m >>= 1)
    v = better(v, {__shfl_xor_sync(0xffffffffu, v.v, m), __shfl_xor_sync(0xffffffffu, v.i, m)});
  if (lane == 0) {
    sv[warp] = v.v;
    si[warp] = v.i;
  }
  __syncthreads();
  value_at r{sv[0], si[0]};
  for (int w = 1; w < (THREADS / warp_size); ++w) r = better(r, {sv[w], si[w]});
  __syncthreads();
  return r;
}

constexpr int32_t no_index = 0x7fffffff;

// The largest non-NaN element and its lowest index ({-inf, no_index} when
// every element is NaN).
template <int THREADS>
__device__ __forceinline__ value_at row_argmax(const float* x, int32_t n) {
  __shared__ float sv[(THREADS / warp_size)];
  __shared__ int32_t si[(THREADS / warp_size)];
  value_at best{-INFINITY, no_index};
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < n; i += THREADS) {
    const float v = x[i];
    if (v == v) best = better(best, {v, i});
  }
  return block_best<THREADS>(best, sv, si);
}

// The count and mass of the kept elements.
template <int THREADS>
__device__ __forceinline__ void kept_measure(const row_weights& rw, sample_cut cut, double& count,
                                             double& mass) {
  __shared__ double scratch[(THREADS / warp_size) * 2];
  double v[2] = {0, 0};
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < rw.n; i += THREADS) {
    const float w = rw(i);
    if (is_kept(w, i, cut)) {
      v[0] += 1;
      v[1] += w;
    }
  }
  block_sums<THREADS>(v, scratch);
  count = v[0];
  mass = v[1];
}

// The largest weight t such that the elements kept by `floor` with weight
// >= t measure at least `target` (their count, or their mass when
// by_mass). The elements kept by `floor` must measure more than `target`.
template <int THREADS>
__device__ __forceinline__ float search_cut_weight(const row_weights& rw, sample_cut floor,
                                                   bool by_mass, double target) {
  __shared__ double scratch[(THREADS / warp_size) * sample_ways];
  // NOTE: positive floats order as their bits; weights are at most 1.
  uint32_t lo = bits_of_float(floor.w), hi = bits_of_float(1.0f) + 1;
  while (hi - lo > 1) {
    float at[sample_ways];
    double v[sample_ways];
    const uint64_t span = hi - lo;
    KVACTOR_UNROLL
    for (int j = 0; j < sample_ways; ++j) {
      at[j] = float_of_bits(lo + static_cast<uint32_t>(span * (j + 1) / (sample_ways + 1)));
      v[j] = 0;
    }
    for (int32_t i = static_cast<int32_t>(threadIdx.x); i < rw.n; i += THREADS) {
      const float w = rw(i);
      if (!is_kept(w, i, floor)) continue;
      const double add = by_mass ? static_cast<double>(w) : 1.0;
      KVACTOR_UNROLL
      for (int j = 0; j < sample_ways; ++j)
        if (w >= at[j]) v[j] += add;
    }
    block_sums<THREADS>(v, scratch);
    // NOTE: the measure falls as the threshold rises; lo keeps reaching the
    // target, hi never does.
    int reached = -1;
    KVACTOR_UNROLL
    for (int j = 0; j < sample_ways; ++j)
      if (v[j] >= target) reached = j;
    const uint32_t new_lo = reached >= 0 ? bits_of_float(at[reached]) : lo;
    const uint32_t new_hi = reached + 1 < sample_ways ? bits_of_float(at[reached + 1]) : hi;
    lo = new_lo;
    hi = new_hi > lo ? new_hi : lo + 1;
  }
  return float_of_bits(lo);
}

// The index of the m-th (from 1) element, in id order, with pred(i, w);
// -1 when there are fewer. Each thread walks its own stretch of the row.
template <int THREADS, class Pred>
__device__ __forceinline__ int32_t nth_in_order(const row_weights& rw, Pred pred, double m) {
  __shared__ double scratch[(THREADS / warp_size)];
  __shared__ int32_t found;
  const int32_t stretch = (rw.n + THREADS - 1) / THREADS;
  const int32_t begin = static_cast<int32_t>(threadIdx.x) * stretch;
  const int32_t end = begin + stretch < rw.n ? begin + stretch : rw.n;
  double mine = 0;
  for (int32_t i = begin; i < end; ++i) mine += pred(i, rw(i)) ? 1 : 0;
  // NOTE: counts are exact in double; the exclusive prefix of this thread.
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  double incl = mine;
  KVACTOR_UNROLL
  for (int d = 1; d < warp_size; d <<= 1) {
    const double o = __shfl_sync(0xffffffffu, incl, lane >= d ? lane - d : lane);
    if (lane >= d) incl += o;
  }
  if (lane == warp_size - 1) scratch[warp] = incl;
  if (threadIdx.x == 0) found = -1;
  __syncthreads();
  double before = incl - mine;
  for (int w = 0; w < warp; ++w) before += scratch[w];
  if (before < m && m <= before + mine) {
    double seen = before;
    for (int32_t i = begin; i < end; ++i)
      if (pred(i, rw(i)) && ++seen == m) {
        found = i;
        break;
      }
  }
  __syncthreads();
  return found;
}

// The smallest top set of the elements `cut` keeps whose measure (count,
// or mass when by_mass) reaches `target`: the cut below it.
template <int THREADS>
__device__ __forceinline__ sample_cut narrow_cut(const row_weights& rw, sample_cut cut,
                                                 bool by_mass, double target) {
  __shared__ double scratch[(THREADS / warp_size) * 3];
  const float t = search_cut_weight<THREADS>(rw, cut, by_mass, target);
  double v[3] = {0, 0, 0}; // above t: count, mass; at t: count
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < rw.n; i += THREADS) {
    const float w = rw(i);
    if (!is_kept(w, i, cut)) continue;
    if (w > t) {
      v[0] += 1;
      v[1] += w;
    } else if (w == t) {
      v[2] += 1;
    }
  }
  block_sums<THREADS>(v, scratch);
  // The ties at t join in id order until the measure reaches the target.
  double ties = by_mass ? ceil((target - v[1]) / static_cast<double>(t)) : target - v[0];
  ties = ties < 1 ? 1 : (ties > v[2] ? v[2] : ties);
  const int32_t id = nth_in_order<THREADS>(
    rw, [&](int32_t i, float w) { return w == t && is_kept(w, i, cut); }, ties);
  return {t, id};
}

// Where min_p, top_k and top_p cut the row, each over what the last kept.
template <int THREADS>
__device__ __forceinline__ sample_cut row_cut(const row_weights& rw, const sample_row& r) {
  sample_cut cut{0.0f, -1};
  if (r.min_p > 0.0f) cut = {r.min_p, no_index}; // the largest weight is 1
  double count = 0, mass = 0;
  kept_measure<THREADS>(rw, cut, count, mass);
  if (r.top_k > 0 && r.top_k < count) {
    cut = narrow_cut<THREADS>(rw, cut, false, r.top_k);
    if (r.top_p < 1.0f) kept_measure<THREADS>(rw, cut, count, mass);
  }
  if (r.top_p < 1.0f && mass > 0)
    cut = narrow_cut<THREADS>(rw, cut, true, static_cast<double>(r.top_p) * mass);
  return cut;
}

// The first kept element, in id order, at which the kept mass passes u
// times its total.
template <int THREADS>
__device__ __forceinline__ int32_t draw(const row_weights& rw, sample_cut cut, double u) {
  __shared__ double scratch[(THREADS / warp_size)];
  __shared__ float sv[(THREADS / warp_size)];
  __shared__ int32_t si[(THREADS / warp_size)];
  __shared__ int32_t found;
  const int32_t stretch = (rw.n + THREADS - 1) / THREADS;
  const int32_t begin = static_cast<int32_t>(threadIdx.x) * stretch;
  const int32_t end = begin + stretch < rw.n ? begin + stretch : rw.n;
  double mine = 0;
  int32_t last = -1;
  for (int32_t i = begin; i < end; ++i) {
    const float w = rw(i);
    if (is_kept(w, i, cut)) {
      mine += w;
      last = i;
    }
  }
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  double excl = 0, incl = mine;
  KVACTOR_UNROLL
  for (int d = 1; d < warp_size; d <<= 1) {
    const double o = __shfl_sync(0xffffffffu, incl, lane >= d ? lane - d : lane);
    if (lane >= d) incl += o;
  }
  excl = __shfl_sync(0xffffffffu, incl, lane > 0 ? lane - 1 : 0);
  if (lane == 0) excl = 0;
  if (lane == warp_size - 1) scratch[warp] = incl;
  __syncthreads();
  double before = 0, total = 0;
  for (int w = 0; w < (THREADS / warp_size); ++w) {
    if (w < warp) before += scratch[w];
    total += scratch[w];
  }
  const double start = before + excl;
  const double target = u * total;
  // The first stretch whose kept mass passes the target (block_best takes
  // the lowest index among the passing); rounding may leave none, then the
  // last stretch with mass (the lowest of the negated indices), at its last
  // kept element.
  const bool passes = last >= 0 && start + mine > target;
  const value_at first =
    block_best<THREADS>({passes ? 1.0f : 0.0f, static_cast<int32_t>(threadIdx.x)}, sv, si);
  const value_at fallback =
    block_best<THREADS>({last >= 0 ? 1.0f : 0.0f, -static_cast<int32_t>(threadIdx.x)}, sv, si);
  if (first.v > 0 ? first.i == static_cast<int32_t>(threadIdx.x)
                  : -fallback.i == static_cast<int32_t>(threadIdx.x)) {
    int32_t pick = last;
    if (first.v > 0) {
      double acc = start;
      for (int32_t i = begin; i < end; ++i) {
        const float w = rw(i);
        if (!is_kept(w, i, cut)) continue;
        acc += w;
        if (acc > target) {
          pick = i;
          break;
        }
      }
    }
    found = pick;
  }
  __syncthreads();
  return found;
}

// Applies each row's logit edits in place, keeping the logit found.
// grid: (num_rows), block: (edit_threads).
// logits: [num_rows, n]; rows: [num_rows]; edits: the step's
__global__ void adjust_kernel(float* logits, int32_t n, const sample_row* rows,
                              logit_edit* edits) {
  const sample_row r = rows[blockIdx.x];
  float* x = logits + static_cast<int64_t>(blockIdx.x) * n;
  for (int32_t e = r.edits_begin + static_cast<int32_t>(threadIdx.x); e < r.edits_end;
       e += edit_threads) {
    logit_edit& d = edits[e];
    float v = x[d.token];
    d.raw = v;
    if (d.flags & edit_bias) v += d.bias;
    if (d.flags & edit_ban) v = -INFINITY;
    if (d.flags & edit_repeat) v = v > 0 ? v / r.repetition_penalty : v * r.repetition_penalty;
    if (d.flags & edit_sub) v -= d.sub;
    x[d.token] = v;
  }
}

// log p of a logit given the row's log sum exp; NaN and -inf are -inf.
__device__ __forceinline__ float log_probability(float v, double log_total) {
  if (!(v == v) || isinf(v) || isinf(log_total)) return -INFINITY;
  return static_cast<float>(static_cast<double>(v) - log_total);
}

// The unchanged row's log sum exp and its num_logprobs most likely tokens
// (most likely first, the lowest id on ties, NaN last).
// grid: (num_rows), block: (THREADS).
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
  logprobs_kernel(const float* logits, int32_t n, const sample_row* rows, sampled_row* out) {
  __shared__ double scratch[(THREADS / warp_size)];
  __shared__ float sv[(THREADS / warp_size)];
  __shared__ int32_t si[(THREADS / warp_size)];
  const sample_row r = rows[blockIdx.x];
  if (r.num_logprobs < 0) return;
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * n;
  sampled_row& o = out[blockIdx.x];
  const value_at top = row_argmax<THREADS>(x, n);
  double log_total = -INFINITY;
  if (isfinite(top.v)) {
    double s[1] = {0};
    for (int32_t i = static_cast<int32_t>(threadIdx.x); i < n; i += THREADS) {
      const float v = x[i];
      if (v == v) s[0] += static_cast<double>(expf(v - top.v));
    }
    block_sums<THREADS>(s, scratch);
    log_total = static_cast<double>(top.v) + log(s[0]);
  }
  // Each round takes the best element after the last one taken: numbers
  // first (larger, then lower id), then NaN by id.
  const int32_t k = r.num_logprobs < n ? r.num_logprobs : n;
  bool nans = false;
  float last_v = INFINITY;
  int32_t last_i = -1;
  for (int32_t round = 0; round < k;) {
    value_at best{-INFINITY, no_index};
    for (int32_t i = static_cast<int32_t>(threadIdx.x); i < n; i += THREADS) {
      const float v = x[i];
      if (nans ? !(v == v) && i > last_i
               : v == v && (v < last_v || (v == last_v && i > last_i)))
        best = better(best, {nans ? 0.0f : v, i});
    }
    const value_at chosen = block_best<THREADS>(best, sv, si);
    if (chosen.i == no_index) { // no number left
      nans = true;
      last_i = -1;
      continue;
    }
    last_v = chosen.v;
    last_i = chosen.i;
    if (threadIdx.x == 0) {
      o.top_ids[round] = chosen.i;
      o.top_logprobs[round] = log_probability(x[chosen.i], log_total);
    }
    ++round;
  }
  if (threadIdx.x == 0) o.log_total = log_total;
}

// One token per row (after adjust_kernel), with its log probability in the
// unchanged row when asked (after logprobs_kernel).
// grid: (num_rows), block: (THREADS).
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
  sample_kernel(const float* logits, int32_t n, const sample_row* rows, const logit_edit* edits,
                sampled_row* out) {
  __shared__ float raw;
  const sample_row r = rows[blockIdx.x];
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * n;
  const value_at top = row_argmax<THREADS>(x, n);
  int32_t token;
  if (r.inv_temperature <= 0.0f || !isfinite(top.v)) {
    token = top.i == no_index ? 0 : top.i;
  } else {
    const row_weights rw{x, n, top.v, r.inv_temperature};
    sample_cut cut{0.0f, -1};
    if (r.min_p > 0.0f || (r.top_k > 0 && r.top_k < n) || r.top_p < 1.0f)
      cut = row_cut<THREADS>(rw, r);
    token = draw<THREADS>(rw, cut, r.u);
  }
  if (threadIdx.x == 0) out[blockIdx.x].no_finite_logit = !isfinite(top.v);
  if (r.num_logprobs < 0) {
    if (threadIdx.x == 0) out[blockIdx.x].token = token;
    return;
  }
  if (threadIdx.x == 0) raw = x[token];
  __syncthreads();
  for (int32_t e = r.edits_begin + static_cast<int32_t>(threadIdx.x); e < r.edits_end;
       e += THREADS)
    if (edits[e].token == token) raw = edits[e].raw; // at most one edit per token
  __syncthreads();
  if (threadIdx.x == 0) {
    out[blockIdx.x].token = token;
    out[blockIdx.x].logprob = log_probability(raw, out[blockIdx.x].log_total);
  }
}

} // namespace kvactor::kernels::gpu
