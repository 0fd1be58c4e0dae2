#pragma once
// gpu::launch_kernel(kernel, grid, block, stream, args...): the one way the
// launchers start a kernel. Under nvcc it is kernel<<<grid, block, 0,
// stream>>>(args...); under g++ (the launchers' *_emulated.cpp twins, linked
// with the CUDA shim in tests) the kernel runs through the emulator on the
// shim's stream (kernels/cuda_shim/launch.hpp).

#if defined(__CUDACC__)
#include <cuda_runtime.h>

namespace kvactor::kernels::gpu {

template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                   const Args&... args) {
  kernel<<<grid, block, 0, stream>>>(args...);
}

} // namespace kvactor::kernels::gpu
#else
#include "kernels/cuda_shim/launch.hpp"

namespace kvactor::kernels::gpu {
using cuda_shim::launch_kernel;
} // namespace kvactor::kernels::gpu
#endif
