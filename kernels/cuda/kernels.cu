// The CUDA kernels, instantiated and launched. Bodies live in the .cuh
// headers, which the emulator tests also compile with g++; g++ also compiles
// this file against the CUDA shim (kernels_emulated.cpp).
#include "kernels/cuda/cache_write.cuh"
#include "kernels/cuda/copy_blocks.cuh"
#include "kernels/cuda/launch.hpp"
#include "kernels/cuda/launch_kernel.cuh"
#include "kernels/cuda/paged_attention.cuh"
#include "kernels/cuda/paged_attention_split.cuh"
#include "kernels/cuda/swap_blocks.cuh"

namespace kvactor::kernels::cuda_launch {
namespace {

static_assert(split_tile == gpu::attention_threads,
              "a split chunk is whole tiles of the attention kernel");

template <class T, int HEAD_DIM, int G>
void launch_attention_group(const paged_attention_params& p, split_plan plan, cudaStream_t stream) {
  const dim3 block(gpu::attention_threads);
  const auto blocks = static_cast<unsigned>(p.num_tokens) * static_cast<unsigned>(p.num_heads / G);
  if (plan.num_splits == 1) {
    gpu::launch_kernel(gpu::paged_attention_kernel<T, HEAD_DIM, G>, dim3(blocks), block, stream, p);
    return;
  }
  // NOTE: 1-D grids; a plan keeps blocks * num_splits within a few per SM.
  gpu::launch_kernel(gpu::paged_attention_split_kernel<T, HEAD_DIM, G>,
                     dim3(blocks * static_cast<unsigned>(plan.num_splits)), block, stream, p, plan);
  gpu::launch_kernel(gpu::attention_merge_kernel<T, HEAD_DIM>,
                     dim3(static_cast<unsigned>(p.num_seqs) * static_cast<unsigned>(p.num_heads)),
                     dim3(HEAD_DIM), stream, p, plan);
}

template <class T, int HEAD_DIM>
cudaError_t launch_attention_head_dim(const paged_attention_params& p, cudaStream_t stream) {
  const split_plan plan = attention_split_of(p);
  switch (gpu::attention_group_size(p.num_heads / p.num_kv_heads)) {
  case 1: launch_attention_group<T, HEAD_DIM, 1>(p, plan, stream); break;
  case 2: launch_attention_group<T, HEAD_DIM, 2>(p, plan, stream); break;
  case 4: launch_attention_group<T, HEAD_DIM, 4>(p, plan, stream); break;
  case 8: launch_attention_group<T, HEAD_DIM, 8>(p, plan, stream); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_attention(const paged_attention_params& p, cudaStream_t stream) {
  switch (p.head_dim) {
  case 64: return launch_attention_head_dim<T, 64>(p, stream);
  case 128: return launch_attention_head_dim<T, 128>(p, stream);
  default: return cudaErrorInvalidValue;
  }
}

} // namespace

split_plan attention_split_of(const paged_attention_params& p) {
  if (p.query_start_loc != nullptr || p.workspace.data == nullptr || p.num_kv_heads <= 0 ||
      p.num_heads <= 0)
    return {};
  const int group = gpu::attention_group_size(p.num_heads / p.num_kv_heads);
  const split_plan plan = plan_attention_split(
    p.num_seqs, p.num_heads / group, static_cast<int64_t>(p.max_blocks_per_seq) * p.block_size,
    p.workspace.num_sms);
  if (plan.num_splits == 1 || split_scratch_floats(p.num_seqs, p.num_heads, p.head_dim,
                                                   plan.num_splits) > p.workspace.num_floats)
    return {};
  return plan;
}

cudaError_t cache_write(const cache_write_params& p, cudaStream_t stream) {
  const long long row_bytes = static_cast<long long>(p.num_kv_heads) * p.head_dim *
                              static_cast<long long>(dtype_size(p.type));
  const long long elem = static_cast<long long>(dtype_size(p.type));
  if (row_bytes % 16 != 0 || p.num_tokens < 0) return cudaErrorInvalidValue;
  if ((p.key_stride * elem) % 16 != 0 || (p.value_stride * elem) % 16 != 0)
    return cudaErrorInvalidValue;
  if (p.num_tokens == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::cache_write_kernel, dim3(static_cast<unsigned>(p.num_tokens)),
                     dim3(gpu::cache_write_threads), stream, p);
  return cudaGetLastError();
}

cudaError_t paged_attention(const paged_attention_params& p, cudaStream_t stream) {
  if (p.num_kv_heads <= 0 || p.num_heads % p.num_kv_heads != 0 || p.block_size <= 0)
    return cudaErrorInvalidValue;
  if (p.query_start_loc == nullptr && p.num_tokens != p.num_seqs) return cudaErrorInvalidValue;
  if (p.num_tokens == 0) return cudaSuccess;
  switch (p.type) {
  case dtype::f32: return launch_attention<float>(p, stream);
  case dtype::f16: return launch_attention<gpu::f16>(p, stream);
  case dtype::bf16: return launch_attention<gpu::bf16>(p, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t copy_blocks(const copy_blocks_params& p, cudaStream_t stream) {
  if (p.block_bytes % 16 != 0 || p.num_pairs < 0 || p.num_layers <= 0) return cudaErrorInvalidValue;
  if (p.num_pairs == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(p.num_pairs), static_cast<unsigned>(2 * p.num_layers));
  gpu::launch_kernel(gpu::copy_blocks_kernel, grid, dim3(gpu::copy_blocks_threads), stream, p);
  return cudaGetLastError();
}

cudaError_t swap_blocks(const swap_blocks_params& p, cudaStream_t stream) {
  if (p.block_bytes % 16 != 0 || p.num_pairs < 0 || p.num_pairs > swap_blocks_params::max_pairs ||
      p.num_layers <= 0)
    return cudaErrorInvalidValue;
  if (p.num_pairs == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(p.num_pairs), static_cast<unsigned>(2 * p.num_layers));
  gpu::launch_kernel(gpu::swap_blocks_kernel, grid, dim3(gpu::swap_blocks_threads), stream, p);
  return cudaGetLastError();
}

} // namespace kvactor::kernels::cuda_launch
