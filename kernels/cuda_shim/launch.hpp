#pragma once
// launch_kernel for the emulated launchers: kernels/cuda/kernels.cu and
// model/cuda/model_kernels.cu compiled by g++ against the shim (their
// *_emulated.cpp twins). A launch checks its configuration against an
// H100's limits (cudaErrorInvalidConfiguration through cudaGetLastError,
// as a real launch), copies the arguments, checks every pointer among them
// (kernel_pointers) and runs the kernel through the emulator on the stream.
//
// Include <cuda_runtime_api.h> before the kernel headers: see
// kernels/emulator/emulator.hpp.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/cuda_shim/shim.hpp"
#include "kernels/emulator/emulator.hpp"

namespace kvactor::cuda_shim {

// cudaSuccess, or the launch error (also this thread's last error).
cudaError_t check_launch(dim3 grid, dim3 block, std::size_t shared_bytes, cudaStream_t stream,
                         const char* kernel);

// A pointer a kernel dereferences must be device memory or pinned host
// memory (mapped, as with unified addressing); pageable host memory is a
// violation, and without an aborting handler a sticky cudaErrorIllegalAddress.
// Returns whether it may.
bool check_kernel_pointer(const void* p, const char* kernel, const char* what);

// The pointers in a kernel argument: a raw pointer is one; a params struct
// declares its own with an overload of kernel_pointers(const T&, f) that
// calls f(pointer, name) for each (found by argument-dependent lookup).
template <class T, class F>
void kernel_pointers(const T& arg, F&& f) {
  if constexpr (std::is_pointer_v<T>) f(static_cast<const void*>(arg), "a pointer argument");
}

template <class... Params, class... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                   const Args&... args) {
  const char* name = __PRETTY_FUNCTION__; // names the kernel's parameter types
  if (check_launch(grid, block, 0, stream, name) != cudaSuccess) return;
  std::tuple<std::decay_t<Params>...> copied(args...);
  bool pointers_ok = true;
  std::apply(
      [&](const auto&... a) {
        (kernel_pointers(a, [&](const void* p, const char* what) {
           if (p != nullptr && !check_kernel_pointer(p, name, what)) pointers_ok = false;
         }),
         ...);
      },
      copied);
  if (!pointers_ok) return; // the fault is the sticky error
  const emu::dim3 g{grid.x, grid.y, grid.z}, b{block.x, block.y, block.z};
  (void)enqueue(stream, name, [kernel, copied, g, b] {
    std::apply([&](const auto&... a) { emu::launch(g, b, kernel, a...); }, copied);
  });
}

} // namespace kvactor::cuda_shim
