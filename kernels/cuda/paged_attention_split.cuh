#pragma once
// CUDA kernels: split-K (flash-decoding) decode attention, for a few
// sequences with long contexts, where the one-pass kernel would run a few
// blocks on a device of 132 SMs (the plan: cuda/attention_split.hpp).
//
//   paged_attention_split_kernel   block (sequence, head group, split) runs
//                                  attend() over keys [split * chunk, + chunk)
//                                  and stores, per query head of its group,
//                                  out_s[d] (unnormalised), m_s and l_s
//   attention_merge_kernel         block (sequence, query head), thread d:
//                                  M = max m_s; w_s = e^(m_s - M)
//                                  out[d] = sum w_s out_s[d] / sum w_s l_s
//
// scratch (floats), rows = num_seqs * num_heads, S = num_splits:
//   out_s: [rows, S, head_dim] | m_s: [rows, S] | l_s: [rows, S]
// A split that starts past its sequence's context stores m = -inf, l = 0 and
// no out_s; the merge skips it (every sequence has at least one key, in
// split 0).

#include "kernels/cuda/attention_split.hpp"
#include "kernels/cuda/paged_attention.cuh"

namespace kvactor::kernels::gpu {

struct split_scratch {
  float* out;  // [rows, num_splits, head_dim]
  float* m;    // [rows, num_splits]
  float* l;    // [rows, num_splits]
};

__host__ __device__ inline split_scratch split_scratch_of(const paged_attention_params& p,
                                                          int num_splits) {
  const int64_t rows = static_cast<int64_t>(p.num_seqs) * p.num_heads;
  float* out = p.workspace.data;
  float* m = out + rows * num_splits * p.head_dim;
  return split_scratch{out, m, m + rows * num_splits};
}

// grid: (num_seqs * (num_heads / G) * num_splits), block: (attention_threads);
// blockIdx.x = (seq * (num_heads / G) + head group) * num_splits + split.
// Decode only (one query token per sequence: token = seq).
template <class T, int HEAD_DIM, int G>
__global__ void paged_attention_split_kernel(const paged_attention_params p,
                                             const split_plan plan) {
  const int num_groups = p.num_heads / G;
  const int split = static_cast<int>(blockIdx.x) % plan.num_splits;
  const int pair = static_cast<int>(blockIdx.x) / plan.num_splits;
  const int seq = pair / num_groups;
  const int head0 = pair % num_groups * G;
  const split_scratch scratch = split_scratch_of(p, plan.num_splits);
  // scratch row of the group's head 0
  const int64_t row0 = static_cast<int64_t>(seq) * p.num_heads + head0;

  const int num_keys = p.seq_lens[seq];
  const int64_t begin = static_cast<int64_t>(split) * plan.chunk;
  // the whole block takes this branch: no barrier is skipped by part of it
  if (begin >= num_keys) {
    const int g = static_cast<int>(threadIdx.x);
    if (g < G) {
      const int64_t at = (row0 + g) * plan.num_splits + split;
      scratch.m[at] = -INFINITY;
      scratch.l[at] = 0.0f;
    }
    return;
  }
  const int end = begin + plan.chunk < num_keys ? static_cast<int>(begin + plan.chunk) : num_keys;
  const int num_splits = plan.num_splits;
  attend<T, HEAD_DIM, G>(
    p, seq, seq, head0, static_cast<int>(begin), end,
    [scratch, row0, split, num_splits](int g, int d, float acc, float m, float l) {
      const int64_t at = (row0 + g) * num_splits + split;
      scratch.out[at * HEAD_DIM + d] = acc;
      if (d == 0) {
        scratch.m[at] = m;
        scratch.l[at] = l;
      }
    });
}

// grid: (num_seqs * num_heads), block: (HEAD_DIM); blockIdx.x = scratch row
// = seq * num_heads + head = the output row (decode: token = seq).
template <class T, int HEAD_DIM>
__global__ void attention_merge_kernel(const paged_attention_params p, const split_plan plan) {
  const split_scratch scratch = split_scratch_of(p, plan.num_splits);
  const int64_t row = blockIdx.x;
  const int d = static_cast<int>(threadIdx.x);
  const float* m = scratch.m + row * plan.num_splits;
  const float* l = scratch.l + row * plan.num_splits;
  float m_max = -INFINITY;
  for (int s = 0; s < plan.num_splits; ++s) m_max = fmaxf(m_max, m[s]);
  float sum = 0.0f, acc = 0.0f;
  for (int s = 0; s < plan.num_splits; ++s) {
    if (l[s] == 0.0f) continue;  // past the context: no out_s was stored
    const float w = expf(m[s] - m_max);
    sum = fmaf(w, l[s], sum);
    acc = fmaf(w, scratch.out[(row * plan.num_splits + s) * HEAD_DIM + d], acc);
  }
  static_cast<T*>(p.out)[row * HEAD_DIM + d] = from_float<T>(acc / sum);
}

} // namespace kvactor::kernels::gpu
