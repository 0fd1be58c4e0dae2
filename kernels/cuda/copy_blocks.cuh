#pragma once
// CUDA kernel: copy whole KV blocks within one pool (copy-on-write).

#include "kernels/cuda/compat.cuh"
#include "kernels/params.hpp"

namespace kvactor::kernels::gpu {

constexpr int copy_blocks_threads = 256;

// grid: (num_pairs, 2 * num_layers), block: (copy_blocks_threads).
// blockIdx.y selects the (layer, K|V) pool of the cache
// [num_layers, 2, num_blocks, ...]; block_bytes must be a multiple of 16.
__global__ void copy_blocks_kernel(const copy_blocks_params p) {
  const int pair = static_cast<int>(blockIdx.x);
  const int64_t pool = static_cast<int64_t>(blockIdx.y);  // layer * 2 + (0: K, 1: V)
  const int64_t src = p.pairs[2 * pair];
  const int64_t dst = p.pairs[2 * pair + 1];
  char* base = static_cast<char*>(p.cache) + pool * p.num_blocks * p.block_bytes;
  const char* from = base + src * p.block_bytes;
  char* to = base + dst * p.block_bytes;
  for (int64_t i = threadIdx.x * 16; i < p.block_bytes; i += copy_blocks_threads * 16)
    copy16(to + i, from + i);
}

} // namespace kvactor::kernels::gpu
