#pragma once
// CUDA kernel: scatter new K/V rows into their cache slots.

#include "kernels/cuda/compat.cuh"
#include "kernels/params.hpp"

namespace kvactor::kernels::gpu {

constexpr int cache_write_threads = 128;

// grid: (num_tokens), block: (cache_write_threads).
// One block copies one token's K and V rows, 16 bytes per thread and step.
// Row bytes (num_kv_heads * head_dim * dtype_size) and the strides in bytes
// must be multiples of 16.
__global__ void cache_write_kernel(const cache_write_params p) {
  const int token = static_cast<int>(blockIdx.x);
  const int64_t slot = p.slot_mapping[token];
  if (slot < 0) return;  // padding
  const int elem = p.type == dtype::f32 ? 4 : 2;
  const int row_bytes = p.num_kv_heads * p.head_dim * elem;
  // From token to token:
  const int64_t key_bytes = p.key_stride > 0 ? p.key_stride * elem : row_bytes;
  const int64_t value_bytes = p.value_stride > 0 ? p.value_stride * elem : row_bytes;
  const char* key = static_cast<const char*>(p.key) + token * key_bytes;        // [row_bytes]
  const char* value = static_cast<const char*>(p.value) + token * value_bytes;  // [row_bytes]
  char* k_dst = static_cast<char*>(p.k_cache) + slot * row_bytes;
  char* v_dst = static_cast<char*>(p.v_cache) + slot * row_bytes;
  for (int i = static_cast<int>(threadIdx.x) * 16; i < row_bytes; i += cache_write_threads * 16) {
    copy16(k_dst + i, key + i);
    copy16(v_dst + i, value + i);
  }
}

} // namespace kvactor::kernels::gpu
