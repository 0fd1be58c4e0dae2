#pragma once
// A small CUDA emulator for running kernel sources on the CPU under g++.
//
// Each simulated thread of a block is a cooperative fiber (ucontext) on the
// calling OS thread; blocks run one after another. A fiber runs until it hits
// a barrier (__syncthreads, __syncwarp, a shuffle) and the scheduler resumes
// the others; a barrier opens when every live thread of its block (or warp)
// has reached it. threadIdx is switched with the fiber; __shared__ variables
// are function-local `static thread_local`, valid because one OS thread runs
// one block at a time.
//
// Limits: full-mask shuffles and __syncwarp only (other masks abort); a block
// where some threads wait at __syncthreads and others at a warp barrier aborts
// as divergent; no atomics, no dynamic `extern __shared__`, no streams, no
// timing and no memory-model fidelity (fibers switch only at barriers, so
// missing fences or races are not detected). Logic tests only.
//
// CUDA's runtime headers may come first in the same translation unit (the
// CUDA shim's emulated launchers, kernels/cuda_shim/): then CUDA's dim3 and
// uint3 stay the global ones, the emulator's own keep their namespace, and
// the qualifier macros below replace CUDA's host-compiler (empty) ones.
// Including CUDA headers after this one is not supported.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

namespace kvactor::emu {

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

void syncthreads();
void syncwarp(unsigned mask);
// Exchanges `bytes` bytes with the lanes of the warp: writes `in` as this
// lane's value, waits for the warp, copies source lane `src_lane`'s value out.
void shuffle(const void* in, void* out, unsigned bytes, unsigned mask, int src_lane);
int lane_id();

// Runs body once per simulated thread of every block of the grid.
void launch_body(dim3 grid, dim3 block, const std::function<void()>& body);

// Statistics of the last launch on this OS thread (for tests of the emulator).
struct launch_stats {
  uint64_t num_blocks = 0;
  uint64_t num_switches = 0;
};
launch_stats last_launch_stats();

template <class Kernel, class... Args>
void launch(dim3 grid, dim3 block, Kernel kernel, const Args&... args) {
  launch_body(grid, block, [&] { kernel(args...); });
}

} // namespace kvactor::emu

#if !defined(__VECTOR_TYPES_H__)
using dim3 = kvactor::emu::dim3;
using uint3 = kvactor::emu::uint3;
#endif
extern thread_local kvactor::emu::uint3 threadIdx;
extern thread_local kvactor::emu::uint3 blockIdx;
extern thread_local kvactor::emu::dim3 blockDim;
extern thread_local kvactor::emu::dim3 gridDim;

// NOTE: internal linkage, so that an emulated kernel never meets nvcc's host
// stub of the same kernel when a test also links the CUDA objects (the
// forward pass's emulated test links kvactor_model, which holds them).
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__ static inline
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __launch_bounds__(...)

inline void __syncthreads() { kvactor::emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { kvactor::emu::syncwarp(mask); }

template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16);
  const int lane = kvactor::emu::lane_id();
  int src = lane ^ lane_mask;
  if ((src & ~(width - 1)) != (lane & ~(width - 1))) src = lane;  // outside the segment
  T out;
  kvactor::emu::shuffle(&v, &out, sizeof(T), mask, src);
  return out;
}

template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16);
  const int lane = kvactor::emu::lane_id();
  const int src = (lane & ~(width - 1)) + (src_lane & (width - 1));
  T out;
  kvactor::emu::shuffle(&v, &out, sizeof(T), mask, src);
  return out;
}
