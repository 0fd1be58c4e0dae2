#pragma once
// Launchers of the CUDA kernels (kernels.cu, compiled by nvcc): check the
// arguments, pick the instantiation, compute the grid, launch on `stream` and
// return the launch error (cudaErrorInvalidValue for unsupported arguments).

#include <cuda_runtime_api.h>

#include "kernels/cuda/attention_split.hpp"
#include "kernels/params.hpp"

namespace kvactor::kernels::cuda_launch {

cudaError_t cache_write(const cache_write_params& p, cudaStream_t stream);
// head_dim 64 or 128; f32, f16, bf16. Decode splits long contexts across
// blocks (attention_split_of) when p.workspace allows it.
cudaError_t paged_attention(const paged_attention_params& p, cudaStream_t stream);
// The split paged_attention makes for p: plan_attention_split over the
// device's SMs and max_blocks_per_seq * block_size keys, for decode with a
// workspace large enough; else {} (one pass).
split_plan attention_split_of(const paged_attention_params& p);
cudaError_t copy_blocks(const copy_blocks_params& p, cudaStream_t stream);
// num_pairs <= swap_blocks_params::max_pairs.
cudaError_t swap_blocks(const swap_blocks_params& p, cudaStream_t stream);

} // namespace kvactor::kernels::cuda_launch
