#pragma once
// CUDA kernel: paged attention for decode and prefill/extend (see
// paged_attention_params for the contract).
//
// One block of 128 threads per (query token, group of G query heads that
// share one KV head), G = attention_group_size(num_heads / num_kv_heads) in
// {1, 2, 4, 8}. The block walks the keys of its sequence in tiles of 128, one
// key per thread, for all G heads at once, so each K/V row is read once per
// group:
//
//   tile of keys  j = tile + threadIdx.x
//   1. s_gj  = (q_g * scale) . K[slot(j)]       thread j, queries in shared memory
//   2. m_new = max(m_g, max_j s_gj)             warp shuffles + shared memory
//   3. p_gj  = exp(s_gj - m_new), l_g = l_g * exp(m_g - m_new) + sum_j p_gj
//   4. acc_g = acc_g * exp(m_g - m_new) + sum_j p_gj V[slot(j)]
//      thread t owns output dim t % head_dim of every head of the group; with
//      head_dim 64 the two halves of the block take alternate keys and add up
//      at the end.
//
// slot(j) = block_table[j / block_size] * block_size + j % block_size, so
// contexts of any length and scattered tables need no special case.
// NOTE: correctness first: one query token per block re-reads K/V per query
// token of a prefill chunk (L2 absorbs part of it); a tiled multi-query kernel
// is the next step for long prefill chunks. Decode at small batch and long
// context splits each context across blocks instead
// (paged_attention_split.cuh), over the same attend().

#include "kernels/cuda/compat.cuh"
#include "kernels/params.hpp"

namespace kvactor::kernels::gpu {

constexpr int attention_threads = 128;

// Query heads per block for a GQA ratio: the largest of 8, 4, 2, 1 dividing it.
__host__ __device__ constexpr int attention_group_size(int ratio) {
  return ratio % 8 == 0 ? 8 : ratio % 4 == 0 ? 4 : ratio % 2 == 0 ? 2 : 1;
}

struct max_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// Reduces each v[i] over the block; every thread gets the results.
// scratch: [NUM_WARPS][N] shared floats.
template <int NUM_WARPS, int N, class Op>
__device__ __forceinline__ void block_reduce(float (&v)[N], float (*scratch)[N], Op op) {
  KVACTOR_UNROLL
  for (int m = warp_size / 2; m > 0; m >>= 1) {
    KVACTOR_UNROLL
    for (int i = 0; i < N; ++i) v[i] = op(v[i], __shfl_xor_sync(0xffffffffu, v[i], m));
  }
  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  if (static_cast<int>(threadIdx.x) % warp_size == 0) {
    KVACTOR_UNROLL
    for (int i = 0; i < N; ++i) scratch[warp][i] = v[i];
  }
  __syncthreads();
  KVACTOR_UNROLL
  for (int i = 0; i < N; ++i) {
    float r = scratch[0][i];
    KVACTOR_UNROLL
    for (int w = 1; w < NUM_WARPS; ++w) r = op(r, scratch[w][i]);
    v[i] = r;
  }
  __syncthreads();  // scratch is reused by the next reduction
}

// s[g] = q[g] . k for the G queries. q: [G][HEAD_DIM] floats in shared
// memory; k: [HEAD_DIM], 16-byte aligned.
template <class T, int HEAD_DIM, int G>
__device__ __forceinline__ void dot_rows(const float (*q)[HEAD_DIM], const T* k, float (&s)[G]) {
  constexpr int n = vec16<T>::size;
  KVACTOR_UNROLL
  for (int g = 0; g < G; ++g) s[g] = 0.0f;
  KVACTOR_UNROLL_4
  for (int c = 0; c < HEAD_DIM; c += n) {
    const vec16<T> kv = load16(k + c);
    KVACTOR_UNROLL
    for (int i = 0; i < n; ++i) {
      const float kf = to_float(kv.v[i]);
      KVACTOR_UNROLL
      for (int g = 0; g < G; ++g) s[g] = fmaf(q[g][c + i], kf, s[g]);
    }
  }
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

// The online softmax of one block over keys [key_begin, key_end) of sequence
// `seq` for query token `token` and the G query heads from head0. At the end
// each output element (g, d) has one owning thread, which calls
// finish(g, d, acc, m_g, l_g) with its unnormalised sum acc = sum_j
// e^(s_gj - m_g) V[j][d], the running max m_g and the sum l_g = sum_j
// e^(s_gj - m_g) (-inf and 0 for an empty range). Every thread of the block
// must call it (barriers).
template <class T, int HEAD_DIM, int G, class Finish>
__device__ __forceinline__ void attend(const paged_attention_params& p, int token, int seq,
                                       int head0, int key_begin, int key_end, Finish finish) {
  constexpr int threads = attention_threads;
  constexpr int num_warps = threads / warp_size;
  // keys split across thread groups
  constexpr int splits = HEAD_DIM >= threads ? 1 : threads / HEAD_DIM;
  // output dims per thread and head
  constexpr int dims = HEAD_DIM >= threads ? HEAD_DIM / threads : 1;
  static_assert(HEAD_DIM % threads == 0 || threads % HEAD_DIM == 0, "head_dim vs block size");
  static_assert(HEAD_DIM * sizeof(T) % 16 == 0, "rows must be whole 16-byte vectors");

  __shared__ float q_s[G][HEAD_DIM];               // scaled queries of the group
  __shared__ float p_s[G][threads];                // probabilities of the current tile
  __shared__ float red_s[num_warps][G];            // reduction scratch
  __shared__ float sum_s[splits][G][HEAD_DIM];     // partial outputs of the key splits

  const int tid = static_cast<int>(threadIdx.x);
  const int kv_head = head0 / (p.num_heads / p.num_kv_heads);   // G divides the ratio
  const int64_t row_stride = static_cast<int64_t>(p.num_kv_heads) * HEAD_DIM;  // between slots
  const int64_t q_stride =
    p.query_stride > 0 ? p.query_stride : static_cast<int64_t>(p.num_heads) * HEAD_DIM;
  const T* q =
    static_cast<const T*>(p.query) + static_cast<int64_t>(token) * q_stride + head0 * HEAD_DIM;
  const T* k_base = static_cast<const T*>(p.k_cache) + kv_head * HEAD_DIM;
  const T* v_base = static_cast<const T*>(p.v_cache) + kv_head * HEAD_DIM;
  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;

  for (int i = tid; i < G * HEAD_DIM; i += threads)
    q_s[i / HEAD_DIM][i % HEAD_DIM] = to_float(q[i]) * p.scale;
  __syncthreads();

  const int split = splits > 1 ? tid / HEAD_DIM : 0;
  const int dim0 = splits > 1 ? tid % HEAD_DIM : tid;
  float m[G], l[G], acc[G][dims];
  KVACTOR_UNROLL
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
    KVACTOR_UNROLL
    for (int i = 0; i < dims; ++i) acc[g][i] = 0.0f;
  }

  for (int tile = key_begin; tile < key_end; tile += threads) {
    const int j = tile + tid;
    float s[G];
    if (j < key_end) {
      const int64_t slot =
        static_cast<int64_t>(table[j / p.block_size]) * p.block_size + j % p.block_size;
      dot_rows<T, HEAD_DIM, G>(q_s, k_base + slot * row_stride, s);
    } else {
      KVACTOR_UNROLL
      for (int g = 0; g < G; ++g) s[g] = -INFINITY;
    }
    float r[G];
    KVACTOR_UNROLL
    for (int g = 0; g < G; ++g) r[g] = s[g];
    block_reduce<num_warps, G>(r, red_s, max_op{});
    float alpha[G];
    KVACTOR_UNROLL
    for (int g = 0; g < G; ++g) {
      const float m_new = fmaxf(m[g], r[g]);
      const float e = j < key_end ? expf(s[g] - m_new) : 0.0f;
      p_s[g][tid] = e;
      alpha[g] = expf(m[g] - m_new);  // 0 on the first tile (m = -inf)
      m[g] = m_new;
      r[g] = e;
    }
    block_reduce<num_warps, G>(r, red_s, sum_op{});  // its barrier also publishes p_s
    KVACTOR_UNROLL
    for (int g = 0; g < G; ++g) {
      l[g] = l[g] * alpha[g] + r[g];
      KVACTOR_UNROLL
      for (int i = 0; i < dims; ++i) acc[g][i] *= alpha[g];
    }
    const int tile_len = key_end - tile < threads ? key_end - tile : threads;
    for (int t = split; t < tile_len; t += splits) {
      const int jj = tile + t;
      const int64_t slot =
        static_cast<int64_t>(table[jj / p.block_size]) * p.block_size + jj % p.block_size;
      const T* v = v_base + slot * row_stride;
      KVACTOR_UNROLL
      for (int i = 0; i < dims; ++i) {
        const float vf = to_float(v[dim0 + i * threads]);
        KVACTOR_UNROLL
        for (int g = 0; g < G; ++g) acc[g][i] = fmaf(p_s[g][t], vf, acc[g][i]);
      }
    }
    __syncthreads();  // p_s is rewritten by the next tile
  }

  if (splits > 1) {
    KVACTOR_UNROLL
    for (int g = 0; g < G; ++g) sum_s[split][g][dim0] = acc[g][0];
    __syncthreads();
    if (split == 0) {
      KVACTOR_UNROLL
      for (int g = 0; g < G; ++g) {
        float total = 0.0f;
        KVACTOR_UNROLL
        for (int k = 0; k < splits; ++k) total += sum_s[k][g][dim0];
        finish(g, dim0, total, m[g], l[g]);
      }
    }
  } else {
    KVACTOR_UNROLL
    for (int g = 0; g < G; ++g) {
      KVACTOR_UNROLL
      for (int i = 0; i < dims; ++i) finish(g, dim0 + i * threads, acc[g][i], m[g], l[g]);
    }
  }
}

// grid: (num_tokens * num_heads / G), block: (attention_threads);
// blockIdx.x = token * (num_heads / G) + head group.
// NOTE: a 1-D grid: no 65535 limit of grid.y applies to prefill batches.
template <class T, int HEAD_DIM, int G>
__global__ void paged_attention_kernel(const paged_attention_params p) {
  const int num_groups = p.num_heads / G;
  const int token = static_cast<int>(blockIdx.x) / num_groups;
  const int head0 = static_cast<int>(blockIdx.x) % num_groups * G;

  int seq = token, q_index = 0, q_len = 1;
  if (p.query_start_loc != nullptr) {
    seq = find_sequence(p.query_start_loc, p.num_seqs, token);
    q_index = token - p.query_start_loc[seq];
    q_len = p.query_start_loc[seq + 1] - p.query_start_loc[seq];
  }
  const int num_keys = p.seq_lens[seq] - q_len + q_index + 1;  // causal: keys 0 ..= position
  T* out = static_cast<T*>(p.out) + (static_cast<int64_t>(token) * p.num_heads + head0) * HEAD_DIM;
  attend<T, HEAD_DIM, G>(p, token, seq, head0, 0, num_keys,
                         [out](int g, int d, float acc, float, float l) {
                           out[g * HEAD_DIM + d] = from_float<T>(acc / l);
                         });
}

} // namespace kvactor::kernels::gpu
