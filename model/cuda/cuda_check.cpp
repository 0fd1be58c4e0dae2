#include "model/cuda/cuda_check.hpp"

#include <string>

namespace kvactor::model::cuda_check {
namespace {

status failed(const char* kind, const char* name, const char* text, const char* call,
              const char* file, int line) {
  return error_in("forward pass (cuda)", std::string(kind) + " error " + name + " (" + text +
                                             ") in " + call + " at " + file + ":" +
                                             std::to_string(line));
}

} // namespace

status check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return {};
  return failed("CUDA", cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
}

status check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  return failed("cuBLAS", cublasGetStatusName(s), cublasGetStatusString(s), call, file, line);
}

} // namespace kvactor::model::cuda_check
