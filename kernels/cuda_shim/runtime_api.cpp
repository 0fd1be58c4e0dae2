// The CUDA runtime's device, memory and copy calls as kvactor uses them,
// over host memory (memory.cpp) and shim streams (stream.cpp). One device:
// an H100 80GB's properties.
#include <cstring>
#include <string>

#include "kernels/cuda_shim/detail.hpp"
#include "kernels/cuda_shim/shim.hpp"
#include "kernels/cuda_shim/stream.hpp"

namespace kvactor::cuda_shim {
namespace {

thread_local int current_device = 0;

cudaDeviceProp h100() {
  cudaDeviceProp p{};
  std::strncpy(p.name, "NVIDIA H100 80GB HBM3 (kvactor CUDA shim)", sizeof p.name - 1);
  p.totalGlobalMem = detail::device_total_bytes();
  p.sharedMemPerBlock = 48 * 1024;
  p.sharedMemPerBlockOptin = 227 * 1024;
  p.sharedMemPerMultiprocessor = 228 * 1024;
  p.reservedSharedMemPerBlock = 1024;
  p.regsPerBlock = 65536;
  p.regsPerMultiprocessor = 65536;
  p.warpSize = 32;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsDim[0] = 1024;
  p.maxThreadsDim[1] = 1024;
  p.maxThreadsDim[2] = 64;
  p.maxGridSize[0] = 2147483647;
  p.maxGridSize[1] = 65535;
  p.maxGridSize[2] = 65535;
  p.totalConstMem = 64 * 1024;
  p.major = 9;
  p.minor = 0;
  p.multiProcessorCount = 132;
  p.maxThreadsPerMultiProcessor = 2048;
  p.maxBlocksPerMultiProcessor = 32;
  p.l2CacheSize = 50 * 1024 * 1024;
  p.memoryBusWidth = 5120;
  p.canMapHostMemory = 1;
  p.unifiedAddressing = 1;
  p.concurrentKernels = 1;
  p.asyncEngineCount = 3;
  p.managedMemory = 1;
  p.ECCEnabled = 1;
  return p;
}

const char* kind_name(pointer_kind k) {
  switch (k) {
  case pointer_kind::device: return "device memory";
  case pointer_kind::pinned: return "pinned host memory";
  case pointer_kind::pageable: return "pageable host memory";
  }
  return "?";
}

// The checks of a copy; cudaSuccess or the error to return.
cudaError_t check_copy(const char* call, void* dst, const void* src, std::size_t bytes,
                       cudaMemcpyKind kind, bool async) {
  if (detail::in_unallocated_device_memory(dst) || detail::in_unallocated_device_memory(src)) {
    violation(std::string(call) + " with device memory that is not allocated: destination " +
              detail::describe(dst) + ", source " + detail::describe(src));
    return detail::fail(cudaErrorInvalidValue);
  }
  const pointer_kind d = kind_of(dst), s = kind_of(src);
  const bool dst_device = d == pointer_kind::device, src_device = s == pointer_kind::device;
  bool ok = true;
  switch (kind) {
  case cudaMemcpyHostToHost: ok = !dst_device && !src_device; break;
  case cudaMemcpyHostToDevice: ok = dst_device && !src_device; break;
  case cudaMemcpyDeviceToHost: ok = !dst_device && src_device; break;
  case cudaMemcpyDeviceToDevice: ok = dst_device && src_device; break;
  case cudaMemcpyDefault: break;
  default: return detail::fail(cudaErrorInvalidValue);
  }
  if (!ok) {
    violation(std::string(call) + ": the direction does not match the pointers: destination " +
              detail::describe(dst) + ", source " + detail::describe(src));
    return detail::fail(cudaErrorInvalidValue);
  }
  if (!detail::in_one_allocation(dst, bytes) || !detail::in_one_allocation(src, bytes)) {
    violation(std::string(call) + " of " + std::to_string(bytes) +
              " bytes runs past the end of an allocation: " + "destination " +
              detail::describe(dst) + ", source " + detail::describe(src));
    return detail::fail(cudaErrorInvalidValue);
  }
  // NOTE: on hardware an async copy with a pageable side is staged and
  // blocks the calling thread; kvactor's device calls must return at once.
  if (async && (d == pointer_kind::pageable || s == pointer_kind::pageable) &&
      (dst_device || src_device)) {
    violation(std::string(call) + " with " + kind_name(pointer_kind::pageable) + " (" +
              detail::describe(d == pointer_kind::pageable ? dst : static_cast<const void*>(src)) +
              "): an async copy needs pinned host memory (cudaHostAlloc)");
    return detail::fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

} // namespace
} // namespace kvactor::cuda_shim

namespace shim = kvactor::cuda_shim;
namespace detail = kvactor::cuda_shim::detail;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (const cudaError_t e = shim::enter("cudaGetDeviceCount"); e != cudaSuccess) return e;
  if (count == nullptr) return detail::fail(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (const cudaError_t e = shim::enter("cudaSetDevice"); e != cudaSuccess) return e;
  if (device != 0) return detail::fail(cudaErrorInvalidDevice);
  shim::current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (const cudaError_t e = shim::enter("cudaGetDevice"); e != cudaSuccess) return e;
  if (device == nullptr) return detail::fail(cudaErrorInvalidValue);
  *device = shim::current_device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (const cudaError_t e = shim::enter("cudaGetDeviceProperties"); e != cudaSuccess) return e;
  if (prop == nullptr) return detail::fail(cudaErrorInvalidValue);
  if (device != 0) return detail::fail(cudaErrorInvalidDevice);
  *prop = shim::h100();
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (const cudaError_t e = shim::enter("cudaMemGetInfo"); e != cudaSuccess) return e;
  if (free == nullptr || total == nullptr) return detail::fail(cudaErrorInvalidValue);
  *total = detail::device_total_bytes();
  *free = *total - detail::device_bytes_in_use();
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  if (const cudaError_t e = shim::enter("cudaMalloc"); e != cudaSuccess) return e;
  if (p == nullptr) return detail::fail(cudaErrorInvalidValue);
  *p = detail::device_alloc(bytes);
  return *p != nullptr ? cudaSuccess : detail::fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* p) {
  if (const cudaError_t e = shim::enter("cudaFree"); e != cudaSuccess) return e;
  if (p == nullptr) return cudaSuccess;
  if (!detail::device_free(p)) {
    shim::violation("cudaFree of " + detail::describe(p) +
                    ", not the start of a live cudaMalloc allocation");
    return detail::fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int flags) {
  if (const cudaError_t e = shim::enter("cudaHostAlloc"); e != cudaSuccess) return e;
  if (p == nullptr || (flags & ~0xfu) != 0) return detail::fail(cudaErrorInvalidValue);
  *p = detail::pinned_alloc(bytes);
  return *p != nullptr ? cudaSuccess : detail::fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocHost(void** p, size_t bytes) {
  return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void* p) {
  if (const cudaError_t e = shim::enter("cudaFreeHost"); e != cudaSuccess) return e;
  if (p == nullptr) return cudaSuccess;
  if (!detail::pinned_free(p)) {
    shim::violation("cudaFreeHost of " + detail::describe(p) +
                    ", not the start of a live cudaHostAlloc allocation");
    return detail::fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (const cudaError_t e = shim::enter("cudaMemcpyAsync"); e != cudaSuccess) return e;
  detail::stream_impl* s = detail::stream_of(stream);
  if (s == nullptr) return detail::fail(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = shim::check_copy("cudaMemcpyAsync", dst, src, bytes, kind, true);
      e != cudaSuccess)
    return e;
  if (bytes > 0)
    s->push(detail::stream_impl::task_kind::device, "cudaMemcpyAsync",
            [dst, src, bytes] { std::memcpy(dst, src, bytes); });
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (const cudaError_t e = shim::enter("cudaMemcpy"); e != cudaSuccess) return e;
  if (const cudaError_t e = shim::check_copy("cudaMemcpy", dst, src, bytes, kind, false);
      e != cudaSuccess)
    return e;
  detail::stream_impl* s = detail::stream_of(nullptr);
  if (bytes > 0) {
    s->push(detail::stream_impl::task_kind::device, "cudaMemcpy",
            [dst, src, bytes] { std::memcpy(dst, src, bytes); });
    s->synchronize();
  }
  return shim::enter("cudaMemcpy");
}

} // extern "C"
