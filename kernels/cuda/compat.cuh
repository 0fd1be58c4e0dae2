#pragma once
// What the kernel headers need from CUDA, for nvcc (real kernels) and for g++
// (the emulator in kernels/emulator/). Kernel sources include only this.

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define KVACTOR_UNROLL _Pragma("unroll")
#define KVACTOR_UNROLL_4 _Pragma("unroll 4")
#else
#include "kernels/dtype.hpp"
#include "kernels/emulator/emulator.hpp"
#define KVACTOR_UNROLL
#define KVACTOR_UNROLL_4
#endif

#include <math.h>
#include <stdint.h>

#include <cstring>

namespace kvactor::kernels::gpu {

#if defined(__CUDACC__)
using f16 = __half;
using bf16 = __nv_bfloat16;
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
#else
using f16 = kvactor::kernels::half_t;
using bf16 = kvactor::kernels::bfloat16_t;
inline float to_float(f16 x) { return static_cast<float>(x); }
inline float to_float(bf16 x) { return static_cast<float>(x); }
#endif
__device__ __forceinline__ float to_float(float x) { return x; }

template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
#if defined(__CUDACC__)
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
#else
template <>
inline f16 from_float<f16>(float x) { return f16(x); }
template <>
inline bf16 from_float<bf16>(float x) { return bf16(x); }
#endif

// 16 bytes of elements, the unit of vectorised global loads.
template <class T>
struct alignas(16) vec16 {
  static constexpr int size = 16 / static_cast<int>(sizeof(T));
  T v[size];
};

// Loads 16 bytes from a 16-byte-aligned address.
template <class T>
__device__ __forceinline__ vec16<T> load16(const T* p) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const vec16<T>*>(p);
#else
  vec16<T> r;
  std::memcpy(&r, p, 16);
  return r;
#endif
}

__device__ __forceinline__ void copy16(void* dst, const void* src) {
#if defined(__CUDACC__)
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

constexpr int warp_size = 32;

// NOTE: the kernels carry no __launch_bounds__: with .maxntid 128, ptxas 13
// chose a 32-40 register budget and spilled (cache write 16 B, attention
// f32/128 8 B); without it every kernel fits in <= 44 registers unspilled.

} // namespace kvactor::kernels::gpu
