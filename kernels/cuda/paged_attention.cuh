#pragma once
// CUDA kernel: paged attention for decode and prefill/extend (see
// paged_attention_params for the contract).
//
// One block of 128 threads per (query token, query head). The block walks the
// keys of its sequence in tiles of 128, one key per thread:
//
//   tile of keys  j = tile + threadIdx.x
//   1. s_j   = (q * scale) . K[slot(j)]         thread j, query in shared memory
//   2. m_new = max(m, max_j s_j)                warp shuffles + shared memory
//   3. p_j   = exp(s_j - m_new), l = l * exp(m - m_new) + sum_j p_j
//   4. acc   = acc * exp(m - m_new) + sum_j p_j V[slot(j)]
//      thread t owns output dim t % head_dim; with head_dim 64 the two halves
//      of the block take alternate keys and add up at the end.
//
// slot(j) = block_table[j / block_size] * block_size + j % block_size, so
// contexts of any length and scattered tables need no special case.
// NOTE: correctness first: one query per block re-reads K/V per query head of
// a GQA group and per query token of a prefill chunk (L2 absorbs part of it);
// a tiled multi-query kernel is the next step for long prefill chunks.

#include "kernels/cuda/compat.cuh"
#include "kernels/params.hpp"

namespace kvactor::kernels::gpu {

constexpr int attention_threads = 128;

struct max_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// Reduces v over the block; every thread gets the result.
// scratch: [NUM_WARPS] shared floats.
template <int NUM_WARPS, class Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch, Op op) {
  KVACTOR_UNROLL
  for (int m = warp_size / 2; m > 0; m >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  if (static_cast<int>(threadIdx.x) % warp_size == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  KVACTOR_UNROLL
  for (int w = 1; w < NUM_WARPS; ++w) r = op(r, scratch[w]);
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// q: [HEAD_DIM] floats in shared memory; k: [HEAD_DIM], 16-byte aligned.
template <class T, int HEAD_DIM>
__device__ __forceinline__ float dot_row(const float* q, const T* k) {
  constexpr int n = vec16<T>::size;
  float s = 0.0f;
  KVACTOR_UNROLL_4
  for (int c = 0; c < HEAD_DIM; c += n) {
    const vec16<T> kv = load16(k + c);
    KVACTOR_UNROLL
    for (int i = 0; i < n; ++i) s = fmaf(q[c + i], to_float(kv.v[i]), s);
  }
  return s;
}

// Sequence of query token `token`: the s with qsl[s] <= token < qsl[s + 1].
__device__ __forceinline__ int find_sequence(const int32_t* qsl, int num_seqs, int token) {
  int lo = 0, hi = num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (qsl[mid] <= token) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// grid: (num_tokens * num_heads), block: (attention_threads);
// blockIdx.x = token * num_heads + head.
// NOTE: a 1-D grid with heads fastest: the query heads of one GQA group are
// adjacent blocks that run together and walk the same K/V rows, so all but
// the first read them from L2; and no 65535 limit of grid.y applies.
template <class T, int HEAD_DIM>
__global__ void paged_attention_kernel(const paged_attention_params p) {
  constexpr int threads = attention_threads;
  constexpr int num_warps = threads / warp_size;
  constexpr int groups = HEAD_DIM >= threads ? 1 : threads / HEAD_DIM;  // keys split across
  constexpr int dims = HEAD_DIM >= threads ? HEAD_DIM / threads : 1;    // output dims per thread
  static_assert(HEAD_DIM % threads == 0 || threads % HEAD_DIM == 0, "head_dim vs block size");
  static_assert(HEAD_DIM * sizeof(T) % 16 == 0, "rows must be whole 16-byte vectors");

  __shared__ float q_s[HEAD_DIM];             // scaled query
  __shared__ float p_s[threads];              // probabilities of the current tile
  __shared__ float red_s[num_warps];          // reduction scratch
  __shared__ float sum_s[groups][HEAD_DIM];   // partial outputs of the key groups

  const int token = static_cast<int>(blockIdx.x) / p.num_heads;
  const int head = static_cast<int>(blockIdx.x) % p.num_heads;
  const int tid = static_cast<int>(threadIdx.x);

  int seq = token, q_index = 0, q_len = 1;
  if (p.query_start_loc != nullptr) {
    seq = find_sequence(p.query_start_loc, p.num_seqs, token);
    q_index = token - p.query_start_loc[seq];
    q_len = p.query_start_loc[seq + 1] - p.query_start_loc[seq];
  }
  const int num_keys = p.seq_lens[seq] - q_len + q_index + 1;  // causal: keys 0 ..= position
  const int kv_head = head / (p.num_heads / p.num_kv_heads);
  const int64_t row_stride = static_cast<int64_t>(p.num_kv_heads) * HEAD_DIM;  // between slots
  const int64_t q_stride = p.query_stride > 0 ? p.query_stride : static_cast<int64_t>(p.num_heads) * HEAD_DIM;
  const T* q = static_cast<const T*>(p.query) + static_cast<int64_t>(token) * q_stride + head * HEAD_DIM;
  const T* k_base = static_cast<const T*>(p.k_cache) + kv_head * HEAD_DIM;
  const T* v_base = static_cast<const T*>(p.v_cache) + kv_head * HEAD_DIM;
  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;

  for (int d = tid; d < HEAD_DIM; d += threads) q_s[d] = to_float(q[d]) * p.scale;
  __syncthreads();

  const int group = groups > 1 ? tid / HEAD_DIM : 0;
  const int dim0 = groups > 1 ? tid % HEAD_DIM : tid;
  float m = -INFINITY, l = 0.0f;
  float acc[dims];
  KVACTOR_UNROLL
  for (int i = 0; i < dims; ++i) acc[i] = 0.0f;

  for (int tile = 0; tile < num_keys; tile += threads) {
    const int j = tile + tid;
    float s = -INFINITY;
    if (j < num_keys) {
      const int64_t slot = static_cast<int64_t>(table[j / p.block_size]) * p.block_size + j % p.block_size;
      s = dot_row<T, HEAD_DIM>(q_s, k_base + slot * row_stride);
    }
    const float m_new = fmaxf(m, block_reduce<num_warps>(s, red_s, max_op{}));
    const float e = j < num_keys ? expf(s - m_new) : 0.0f;
    p_s[tid] = e;
    const float alpha = expf(m - m_new);  // 0 on the first tile (m = -inf)
    l = l * alpha + block_reduce<num_warps>(e, red_s, sum_op{});  // its barrier publishes p_s
    m = m_new;
    KVACTOR_UNROLL
    for (int i = 0; i < dims; ++i) acc[i] *= alpha;
    const int tile_len = num_keys - tile < threads ? num_keys - tile : threads;
    for (int t = group; t < tile_len; t += groups) {
      const int jj = tile + t;
      const int64_t slot = static_cast<int64_t>(table[jj / p.block_size]) * p.block_size + jj % p.block_size;
      const T* v = v_base + slot * row_stride;
      const float pt = p_s[t];
      KVACTOR_UNROLL
      for (int i = 0; i < dims; ++i) acc[i] = fmaf(pt, to_float(v[dim0 + i * threads]), acc[i]);
    }
    __syncthreads();  // p_s is rewritten by the next tile
  }

  T* out = static_cast<T*>(p.out) + (static_cast<int64_t>(token) * p.num_heads + head) * HEAD_DIM;
  const float inv_l = 1.0f / l;
  if (groups > 1) {
    sum_s[group][dim0] = acc[0];
    __syncthreads();
    if (group == 0) {
      float r = 0.0f;
      KVACTOR_UNROLL
      for (int g = 0; g < groups; ++g) r += sum_s[g][dim0];
      out[dim0] = from_float<T>(r * inv_l);
    }
  } else {
    KVACTOR_UNROLL
    for (int i = 0; i < dims; ++i) out[dim0 + i * threads] = from_float<T>(acc[i] * inv_l);
  }
}

} // namespace kvactor::kernels::gpu
