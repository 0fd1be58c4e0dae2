#pragma once
// Launchers of the CUDA kernels (kernels.cu, compiled by nvcc): check the
// arguments, pick the instantiation, compute the grid, launch on `stream` and
// return the launch error (cudaErrorInvalidValue for unsupported arguments).

#include <cuda_runtime_api.h>

#include "kernels/params.hpp"

namespace kvactor::kernels::cuda_launch {

cudaError_t cache_write(const cache_write_params& p, cudaStream_t stream);
// head_dim 64 or 128; f32, f16, bf16.
cudaError_t paged_attention(const paged_attention_params& p, cudaStream_t stream);
cudaError_t copy_blocks(const copy_blocks_params& p, cudaStream_t stream);
// num_pairs <= swap_blocks_params::max_pairs.
cudaError_t swap_blocks(const swap_blocks_params& p, cudaStream_t stream);

} // namespace kvactor::kernels::cuda_launch
