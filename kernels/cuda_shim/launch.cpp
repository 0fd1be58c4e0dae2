#include "kernels/cuda_shim/launch.hpp"

#include <string>

#include "kernels/cuda_shim/detail.hpp"

namespace kvactor::cuda_shim {

cudaError_t check_launch(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                         const char* kernel) {
  if (const cudaError_t e = enter("a kernel launch"); e != cudaSuccess) return e;
  if (detail::stream_of(stream) == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  // NOTE: an H100's limits (runtime_api.cpp's properties): 1024 threads per
  // block, block (1024, 1024, 64), grid (2^31 - 1, 65535, 65535), 48 KiB of
  // dynamic shared memory without cudaFuncSetAttribute.
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  const bool ok = threads >= 1 && threads <= 1024 && block.x <= 1024 && block.y <= 1024 &&
                  block.z <= 64 && grid.x >= 1 && grid.y >= 1 && grid.z >= 1 &&
                  grid.x <= 2147483647u && grid.y <= 65535 && grid.z <= 65535 &&
                  shared_bytes <= 48 * 1024;
  if (!ok) {
    // NOTE: not a violation: kvactor checks launch errors, and a test may
    // want to see this one.
    (void)kernel;
    return set_error(cudaErrorInvalidConfiguration);
  }
  return cudaSuccess;
}

bool check_kernel_pointer(const void* p, const char* kernel, const char* what) {
  if (kind_of(p) != pointer_kind::pageable) return true;
  // NOTE: both pageable host memory and freed device memory fault on a GPU.
  violation(std::string("kernel argument ") + what + " points to " + detail::describe(p) +
            ", which a kernel cannot read; upload it to device memory (launch of " + kernel + ")");
  detail::set_sticky(cudaErrorIllegalAddress);
  return false;
}

} // namespace kvactor::cuda_shim
