// The cuBLAS calls of the CUDA forward pass (model/cuda/cublas_gemm.cpp):
// a handle bound to a stream, and cublasGemmEx (fp32 A, B, C, or bf16 A, B
// with fp32 C; fp32 compute) as a column-major OpenBLAS sgemm that runs on
// the handle's stream, in its order; bf16 operands are widened to fp32
// there first (exact), as the products of bf16 values are exact in fp32.
#include <cublas_v2.h>

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda_shim/detail.hpp"
#include "kernels/cuda_shim/shim.hpp"

struct cublasContext {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

namespace {

namespace shim = kvactor::cuda_shim;

// The host-function rule and the sticky error apply to cuBLAS too.
cublasStatus_t enter(const char* call, cublasHandle_t handle, bool needs_handle = true) {
  if (shim::enter(call) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (needs_handle && handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return CUBLAS_STATUS_SUCCESS;
}

bool on_device(const void* p, const char* call, const char* what) {
  if (shim::kind_of(p) == shim::pointer_kind::device) return true;
  shim::violation(std::string(call) + ": " + what + " is not device memory (" +
                  kvactor::cuda_shim::detail::describe(p) + ")");
  return false;
}

// The element types cublasGemmEx takes with CUBLAS_COMPUTE_32F (cuBLAS's
// table of cublasGemmEx): A and B of one type, C fp32 or (16-bit A, B) of
// theirs. `modelled`: the shim computes it; a combination cuBLAS takes but
// the shim does not model is a violation, not a result.
enum class gemm_types { refused, modelled, not_modelled };

gemm_types classify(cudaDataType a, cudaDataType b, cudaDataType c) {
  if (a != b) return gemm_types::refused;
  if (a == CUDA_R_32F) return c == CUDA_R_32F ? gemm_types::modelled : gemm_types::refused;
  if (a == CUDA_R_16BF) {
    if (c == CUDA_R_32F) return gemm_types::modelled;
    return c == CUDA_R_16BF ? gemm_types::not_modelled : gemm_types::refused;
  }
  if (a == CUDA_R_16F)
    return c == CUDA_R_32F || c == CUDA_R_16F ? gemm_types::not_modelled : gemm_types::refused;
  if (a == CUDA_R_8I) return c == CUDA_R_32F ? gemm_types::not_modelled : gemm_types::refused;
  return gemm_types::refused;
}

std::size_t element_bytes(cudaDataType t) { return t == CUDA_R_32F ? 4 : 2; }

// Elements a column-major operand of `rows` x `cols` with leading dimension
// ld spans: the last column ends `rows` into it.
std::size_t span_elements(int rows, int cols, int ld) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::size_t>(ld) * static_cast<std::size_t>(cols - 1) +
         static_cast<std::size_t>(rows);
}

// Operand p as fp32 (stream thread: device memory is readable there). fp32
// is used in place; bf16 is widened into `widened` (the upper half of an
// fp32, exact), the elements between columns included.
const float* as_f32(const void* p, cudaDataType t, std::size_t num, std::vector<float>& widened) {
  if (t == CUDA_R_32F) return static_cast<const float*>(p);
  widened.resize(num);
  const auto* bits = static_cast<const uint16_t*>(p);
  for (std::size_t i = 0; i < num; ++i) {
    const uint32_t u = uint32_t{bits[i]} << 16;
    std::memcpy(&widened[i], &u, sizeof(float));
  }
  return widened.data();
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (const cublasStatus_t s = enter("cublasCreate", nullptr, false); s != CUBLAS_STATUS_SUCCESS)
    return s;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (const cublasStatus_t s = enter("cublasDestroy", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (const cublasStatus_t s = enter("cublasSetStream", handle); s != CUBLAS_STATUS_SUCCESS)
    return s;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
  if (const cublasStatus_t s = enter("cublasSetWorkspace", handle); s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (bytes > 0 && !on_device(workspace, "cublasSetWorkspace", "the workspace"))
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (const cublasStatus_t s = enter("cublasSetMathMode", handle); s != CUBLAS_STATUS_SUCCESS)
    return s;
  // NOTE: fp32 products only; a mode that allows TF32 or lower would change
  // numerics the shim does not model.
  return mode == CUBLAS_DEFAULT_MATH || mode == CUBLAS_PEDANTIC_MATH ? CUBLAS_STATUS_SUCCESS
                                                                     : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (const cublasStatus_t s = enter("cublasSetPointerMode", handle); s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (mode != CUBLAS_POINTER_MODE_HOST) return CUBLAS_STATUS_NOT_SUPPORTED;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t /*algo*/) {
  if (const cublasStatus_t s = enter("cublasGemmEx", handle); s != CUBLAS_STATUS_SUCCESS) return s;
  if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_PEDANTIC)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  switch (classify(Atype, Btype, Ctype)) {
  case gemm_types::refused: return CUBLAS_STATUS_NOT_SUPPORTED;
  case gemm_types::not_modelled:
    shim::violation("cublasGemmEx: A, B, C types " + std::to_string(Atype) + ", " +
                    std::to_string(Btype) + ", " + std::to_string(Ctype) +
                    " are valid in cuBLAS but not modelled by the shim");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  case gemm_types::modelled: break;
  }
  const auto op_ok = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T; };
  if (!op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || k < 0 || alpha == nullptr ||
      beta == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int rows_a = transa == CUBLAS_OP_N ? m : k, rows_b = transb == CUBLAS_OP_N ? k : n;
  const int cols_a = transa == CUBLAS_OP_N ? k : m, cols_b = transb == CUBLAS_OP_N ? n : k;
  if (lda < std::max(1, rows_a) || ldb < std::max(1, rows_b) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (!on_device(A, "cublasGemmEx", "A") || !on_device(B, "cublasGemmEx", "B") ||
      !on_device(C, "cublasGemmEx", "C"))
    return CUBLAS_STATUS_INVALID_VALUE;
  const std::size_t num_a = span_elements(rows_a, cols_a, lda),
                    num_b = span_elements(rows_b, cols_b, ldb);
  const std::size_t num_c = span_elements(m, n, ldc);
  for (const auto& [p, bytes, what] :
       {std::tuple{A, num_a * element_bytes(Atype), "A"},
        std::tuple{B, num_b * element_bytes(Btype), "B"},
        std::tuple{static_cast<const void*>(C), num_c * sizeof(float), "C"}}) {
    if (bytes > 0 && !shim::detail::in_one_allocation(p, bytes)) {
      shim::violation(std::string("cublasGemmEx: ") + what + " (" + std::to_string(bytes) +
                      " bytes from its pointer, lda/ldb/ldc included) runs past its allocation");
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  // NOTE: host pointer mode: alpha and beta are read now, as cuBLAS does.
  const float a = *static_cast<const float*>(alpha), b = *static_cast<const float*>(beta);
  const auto ta = transa == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  const auto tb = transb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  auto* pc = static_cast<float*>(C);
  const cudaError_t e = shim::enqueue(handle->stream, "cublasGemmEx", [=] {
    // NOTE: the operands are read (and bf16 widened) here, in stream order,
    // not at the call: earlier work on the stream may still write them.
    std::vector<float> wa, wb;
    const float* pa = as_f32(A, Atype, num_a, wa);
    const float* pb = as_f32(B, Btype, num_b, wb);
    if (k == 0) { // C = beta C, as cuBLAS does (beta 0: zeros, whatever C held)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          float& c = pc[static_cast<std::size_t>(j) * static_cast<std::size_t>(ldc) +
                        static_cast<std::size_t>(i)];
          c = b == 0.0f ? 0.0f : b * c;
        }
      return;
    }
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, a, pa, lda, pb, ldb, b, pc, ldc);
  });
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

const char* cublasGetStatusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  default: return "unknown error";
  }
}

} // extern "C"
