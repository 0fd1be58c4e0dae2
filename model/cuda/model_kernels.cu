// The model's element-wise CUDA kernels and the sampler, instantiated and
// launched. Bodies live in kernels/cuda/model_ops.cuh and sample_ops.cuh,
// which the emulator tests also compile;
// g++ also compiles this file against the CUDA shim (model_kernels_emulated.cpp).
#include "kernels/cuda/launch_kernel.cuh"
#include "kernels/cuda/model_ops.cuh"
#include "kernels/cuda/sample_ops.cuh"
#include "model/cuda/launch.hpp"

namespace kvactor::model::cuda_launch {

namespace gpu = kvactor::kernels::gpu;

cudaError_t embedding(const void* table, bool bf16_table, const int32_t* ids, int32_t num_tokens,
                      int32_t hidden, float* out, cudaStream_t stream) {
  if (num_tokens < 0 || hidden <= 0) return cudaErrorInvalidValue;
  if (num_tokens == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(num_tokens)), block(gpu::model_ops_threads);
  if (bf16_table)
    gpu::launch_kernel(gpu::embedding_kernel<gpu::bf16>, grid, block, stream,
                       static_cast<const gpu::bf16*>(table), ids, out, hidden);
  else
    gpu::launch_kernel(gpu::embedding_kernel<float>, grid, block, stream,
                       static_cast<const float*>(table), ids, out, hidden);
  return cudaGetLastError();
}

namespace {

template <class OUT>
cudaError_t launch_rms_norm(const float* x, int64_t ldx, OUT* out, int64_t ldo, int32_t num_tokens,
                            int32_t heads_per_row, int32_t n, const float* weight, float eps,
                            cudaStream_t stream) {
  if (num_tokens < 0 || heads_per_row <= 0 || n <= 0) return cudaErrorInvalidValue;
  if (num_tokens == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(num_tokens) * static_cast<unsigned>(heads_per_row));
  gpu::launch_kernel(gpu::rms_norm_kernel<OUT>, grid, dim3(gpu::model_ops_threads), stream, x, ldx,
                     out, ldo, heads_per_row, n, weight, eps);
  return cudaGetLastError();
}

template <class OUT>
cudaError_t launch_swiglu(const float* gate, const float* up, OUT* out, int64_t num,
                          cudaStream_t stream) {
  if (num < 0) return cudaErrorInvalidValue;
  if (num == 0) return cudaSuccess;
  const int64_t blocks = (num + gpu::model_ops_threads - 1) / gpu::model_ops_threads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  gpu::launch_kernel(gpu::swiglu_kernel<OUT>, dim3(grid), dim3(gpu::model_ops_threads), stream,
                     gate, up, out, num);
  return cudaGetLastError();
}

} // namespace

cudaError_t rms_norm(const float* x, int64_t ldx, float* out, int64_t ldo, int32_t num_tokens,
                     int32_t heads_per_row, int32_t n, const float* weight, float eps,
                     cudaStream_t stream) {
  return launch_rms_norm(x, ldx, out, ldo, num_tokens, heads_per_row, n, weight, eps, stream);
}

cudaError_t rms_norm_bf16(const float* x, int64_t ldx, void* out, int64_t ldo, int32_t num_tokens,
                          int32_t n, const float* weight, float eps, cudaStream_t stream) {
  return launch_rms_norm(x, ldx, static_cast<gpu::bf16*>(out), ldo, num_tokens, 1, n, weight, eps,
                         stream);
}

cudaError_t rope(float* x, int64_t ldx, int32_t num_tokens, int32_t num_heads, int32_t head_dim,
                 const float* cos, const float* sin, cudaStream_t stream) {
  if (num_tokens < 0 || num_heads <= 0 || head_dim <= 0 || head_dim % 2 != 0)
    return cudaErrorInvalidValue;
  if (num_tokens == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::rope_kernel, dim3(static_cast<unsigned>(num_tokens)),
                     dim3(gpu::model_ops_threads), stream, x, ldx, num_heads, head_dim, cos, sin);
  return cudaGetLastError();
}

cudaError_t rope_bf16(const float* x, int64_t ldx, int32_t num_tokens, int32_t num_rotated,
                      int32_t num_heads, int32_t head_dim, const float* cos, const float* sin,
                      void* out, int64_t ldo, cudaStream_t stream) {
  if (num_tokens < 0 || num_rotated < 0 || num_rotated > num_heads || head_dim <= 0 ||
      head_dim % 2 != 0)
    return cudaErrorInvalidValue;
  if (num_tokens == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::rope_bf16_kernel, dim3(static_cast<unsigned>(num_tokens)),
                     dim3(gpu::model_ops_threads), stream, x, ldx, num_rotated, num_heads,
                     head_dim, cos, sin, static_cast<gpu::bf16*>(out), ldo);
  return cudaGetLastError();
}

cudaError_t swiglu(const float* gate, const float* up, float* out, int64_t num,
                   cudaStream_t stream) {
  return launch_swiglu(gate, up, out, num, stream);
}

cudaError_t swiglu_bf16(const float* gate, const float* up, void* out, int64_t num,
                        cudaStream_t stream) {
  return launch_swiglu(gate, up, static_cast<gpu::bf16*>(out), num, stream);
}

cudaError_t add_bias(float* y, int64_t ldy, int32_t num_rows, int32_t n, const float* bias,
                     cudaStream_t stream) {
  if (num_rows < 0 || n <= 0 || ldy < n) return cudaErrorInvalidValue;
  if (num_rows == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::add_bias_kernel, dim3(static_cast<unsigned>(num_rows)),
                     dim3(gpu::model_ops_threads), stream, y, ldy, bias, n);
  return cudaGetLastError();
}

cudaError_t gather_rows(const float* x, const int32_t* rows, int32_t num_rows, int32_t n,
                        float* out, cudaStream_t stream) {
  if (num_rows < 0 || n <= 0) return cudaErrorInvalidValue;
  if (num_rows == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::gather_rows_kernel, dim3(static_cast<unsigned>(num_rows)),
                     dim3(gpu::model_ops_threads), stream, x, rows, out, n);
  return cudaGetLastError();
}

cudaError_t round_to_bf16(const float* x, int64_t ldx, int32_t num_rows, int32_t n, void* out,
                          int64_t ldo, cudaStream_t stream) {
  if (num_rows < 0 || n <= 0 || ldx < n || ldo < n) return cudaErrorInvalidValue;
  if (num_rows == 0) return cudaSuccess;
  gpu::launch_kernel(gpu::round_to_bf16_kernel, dim3(static_cast<unsigned>(num_rows)),
                     dim3(gpu::model_ops_threads), stream, x, ldx, static_cast<gpu::bf16*>(out),
                     ldo, n);
  return cudaGetLastError();
}

cudaError_t widen_bf16(const void* x, float* out, int64_t num, cudaStream_t stream) {
  if (num < 0) return cudaErrorInvalidValue;
  if (num == 0) return cudaSuccess;
  const int64_t blocks = (num + gpu::model_ops_threads - 1) / gpu::model_ops_threads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  gpu::launch_kernel(gpu::widen_bf16_kernel, dim3(grid), dim3(gpu::model_ops_threads), stream,
                     static_cast<const gpu::bf16*>(x), out, num);
  return cudaGetLastError();
}

cudaError_t sample_rows(float* logits, int32_t n, int32_t num_rows, const gpu::sample_row* rows,
                        gpu::logit_edit* edits, bool any_edits, bool any_logprobs,
                        gpu::sampled_row* out, cudaStream_t stream) {
  if (n <= 0 || num_rows < 0) return cudaErrorInvalidValue;
  if (num_rows == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>(num_rows)), block(gpu::sample_threads);
  // NOTE: the log probabilities are the unchanged row's: before the edits.
  if (any_logprobs)
    gpu::launch_kernel(gpu::logprobs_kernel<gpu::sample_threads>, grid, block, stream,
                       static_cast<const float*>(logits), n, rows, out);
  if (any_edits)
    gpu::launch_kernel(gpu::adjust_kernel, grid, dim3(gpu::edit_threads), stream, logits, n, rows,
                       edits);
  gpu::launch_kernel(gpu::sample_kernel<gpu::sample_threads>, grid, block, stream,
                     static_cast<const float*>(logits), n, rows,
                     static_cast<const gpu::logit_edit*>(edits), out);
  return cudaGetLastError();
}

} // namespace kvactor::model::cuda_launch
