#include "kernels/ops.hpp"

#include "kernels/assert.hpp"
#include "kernels/cpu/kernels.hpp"
#include "kernels/cpu_device.hpp"
#if KVACTOR_HAVE_CUDA
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/launch.hpp"
#include "kernels/cuda_device.hpp"
#endif

namespace kvactor::kernels {
namespace {

cpu_device* as_cpu(device& dev) { return dev.kind() == device_kind::cpu ? static_cast<cpu_device*>(&dev) : nullptr; }

#if KVACTOR_HAVE_CUDA
cuda_device& as_cuda(device& dev) {
  KVACTOR_ASSERT(dev.kind() == device_kind::cuda, "unknown device kind");
  return static_cast<cuda_device&>(dev);
}
#else
[[noreturn]] void no_cuda() { KVACTOR_ASSERT(false, "a non-CPU device in a build without CUDA"); std::abort(); }
#endif

} // namespace

void cache_write(device& dev, stream_id stream, const cache_write_params& p) {
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, p] { cpu::cache_write(p, cpu->pool()); });
    return;
  }
#if KVACTOR_HAVE_CUDA
  KVACTOR_CUDA_CHECK(cuda_launch::cache_write(p, as_cuda(dev).native_stream(stream)));
#else
  no_cuda();
#endif
}

void paged_attention(device& dev, stream_id stream, const paged_attention_params& p) {
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, p] { cpu::paged_attention(p, cpu->pool()); });
    return;
  }
#if KVACTOR_HAVE_CUDA
  KVACTOR_CUDA_CHECK(cuda_launch::paged_attention(p, as_cuda(dev).native_stream(stream)));
#else
  no_cuda();
#endif
}

void copy_blocks(device& dev, stream_id stream, const copy_blocks_params& p) {
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, p] { cpu::copy_blocks(p, cpu->pool()); });
    return;
  }
#if KVACTOR_HAVE_CUDA
  KVACTOR_CUDA_CHECK(cuda_launch::copy_blocks(p, as_cuda(dev).native_stream(stream)));
#else
  no_cuda();
#endif
}

event_ptr swap_blocks(device& dev, stream_id stream, const kv_cache_view& src, const kv_cache_view& dst,
                      std::vector<block_pair> pairs, host_callback on_done) {
  KVACTOR_ASSERT(src.shape.block_bytes() == dst.shape.block_bytes() && src.shape.num_layers == dst.shape.num_layers,
                 "swap between pools of different block shapes");
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, src, dst, pairs = std::move(pairs)] { cpu::swap_blocks(src, dst, pairs, cpu->pool()); });
    return dev.record(stream, std::move(on_done));
  }
  // NOTE: one cudaMemcpyAsync per (pair, layer, K|V); the blocks of a
  // sequence are scattered in both pools, so there is no bigger contiguous run.
  const auto bytes = static_cast<size_t>(src.shape.block_bytes());
  for (const block_pair& pair : pairs) {
    KVACTOR_ASSERT(pair.src >= 0 && pair.src < src.shape.num_blocks && pair.dst >= 0 && pair.dst < dst.shape.num_blocks,
                   "block id out of range");
    for (int32_t layer = 0; layer < src.shape.num_layers; ++layer)
      for (int which = 0; which < 2; ++which)
        dev.copy_async(stream, dst.block(layer, which, pair.dst), src.block(layer, which, pair.src), bytes);
  }
  return dev.record(stream, std::move(on_done));
}

} // namespace kvactor::kernels
