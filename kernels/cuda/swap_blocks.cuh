#pragma once
// CUDA kernel: move whole KV blocks between two pools (swap out: device ->
// pinned host; swap in: pinned host -> device) in one launch, instead of one
// cudaMemcpyAsync per (block, layer, K|V).

#include "kernels/cuda/compat.cuh"
#include "kernels/params.hpp"

namespace kvactor::kernels::gpu {

constexpr int swap_blocks_threads = 256;

// grid: (num_pairs, 2 * num_layers), block: (swap_blocks_threads).
// blockIdx.y selects the (layer, K|V) pool of both caches
// [num_layers, 2, num_blocks, ...]; block_bytes must be a multiple of 16.
__global__ void swap_blocks_kernel(const swap_blocks_params p) {
  const int pair = static_cast<int>(blockIdx.x);
  const int64_t pool = static_cast<int64_t>(blockIdx.y);  // layer * 2 + (0: K, 1: V)
  const int64_t src = p.pairs[2 * pair];
  const int64_t dst = p.pairs[2 * pair + 1];
  const char* from =
    static_cast<const char*>(p.src) + (pool * p.src_num_blocks + src) * p.block_bytes;
  char* to = static_cast<char*>(p.dst) + (pool * p.dst_num_blocks + dst) * p.block_bytes;
  for (int64_t i = threadIdx.x * 16; i < p.block_bytes; i += swap_blocks_threads * 16)
    copy16(to + i, from + i);
}

} // namespace kvactor::kernels::gpu
