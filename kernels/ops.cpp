#include "kernels/ops.hpp"

#include <algorithm>

#include "base/assert.hpp"
#include "kernels/cpu/kernels.hpp"
#include "kernels/cpu_device.hpp"
#if KVACTOR_HAVE_CUDA
#include "kernels/cuda/launch.hpp"
#include "kernels/cuda_device.hpp"
#endif

namespace kvactor::kernels {
namespace {

cpu_device* as_cpu(device& dev) {
  return dev.kind() == device_kind::cpu ? static_cast<cpu_device*>(&dev) : nullptr;
}

#if KVACTOR_HAVE_CUDA
cuda_device& as_cuda(device& dev) {
  KVACTOR_ASSERT(dev.kind() == device_kind::cuda, "unknown device kind");
  return static_cast<cuda_device&>(dev);
}
#else
[[noreturn]] void no_cuda() {
  KVACTOR_ASSERT(false, "a non-CPU device in a build without CUDA");
  std::abort();
}
#endif

} // namespace

void cache_write(device& dev, stream_id stream, const cache_write_params& p) {
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, p] { cpu::cache_write(p, cpu->pool()); });
    return;
  }
#if KVACTOR_HAVE_CUDA
  as_cuda(dev).launched(cuda_launch::cache_write(p, as_cuda(dev).native_stream(stream)),
                        "cache_write");
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
  as_cuda(dev).launched(cuda_launch::paged_attention(p, as_cuda(dev).native_stream(stream)),
                        "paged_attention");
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
  as_cuda(dev).launched(cuda_launch::copy_blocks(p, as_cuda(dev).native_stream(stream)),
                        "copy_blocks");
#else
  no_cuda();
#endif
}

int32_t swap_calls(device_kind kind, size_t num_pairs) {
  if (kind == device_kind::cpu || num_pairs == 0) return num_pairs == 0 ? 0 : 1;
  return static_cast<int32_t>((num_pairs + swap_blocks_params::max_pairs - 1) /
                              swap_blocks_params::max_pairs);
}

event_ptr swap_blocks(device& dev, stream_id stream, const kv_cache_view& src,
                      const kv_cache_view& dst, std::vector<block_pair> pairs,
                      host_callback on_done) {
  KVACTOR_ASSERT(src.shape.block_bytes() == dst.shape.block_bytes() &&
                   src.shape.num_layers == dst.shape.num_layers,
                 "swap between pools of different block shapes");
  if (cpu_device* cpu = as_cpu(dev)) {
    cpu->enqueue(stream, [cpu, src, dst, pairs = std::move(pairs)] {
      cpu::swap_blocks(src, dst, pairs, cpu->pool());
    });
    return dev.record(stream, std::move(on_done));
  }
#if KVACTOR_HAVE_CUDA
  // NOTE: the blocks of a sequence are scattered in both pools; one kernel
  // launch moves up to max_pairs of them, every layer, K and V (not one
  // cudaMemcpyAsync per block, layer and K|V).
  swap_blocks_params p{};
  p.src = src.base;
  p.dst = dst.base;
  p.src_num_blocks = src.shape.num_blocks;
  p.dst_num_blocks = dst.shape.num_blocks;
  p.block_bytes = src.shape.block_bytes();
  p.num_layers = src.shape.num_layers;
  for (size_t first = 0; first < pairs.size(); first += swap_blocks_params::max_pairs) {
    p.num_pairs =
      static_cast<int32_t>(std::min<size_t>(swap_blocks_params::max_pairs, pairs.size() - first));
    for (int32_t i = 0; i < p.num_pairs; ++i) {
      const block_pair& pair = pairs[first + static_cast<size_t>(i)];
      KVACTOR_ASSERT(pair.src >= 0 && pair.src < src.shape.num_blocks && pair.dst >= 0 &&
                       pair.dst < dst.shape.num_blocks,
                     "block id out of range");
      p.pairs[2 * i] = pair.src;
      p.pairs[2 * i + 1] = pair.dst;
    }
    as_cuda(dev).launched(cuda_launch::swap_blocks(p, as_cuda(dev).native_stream(stream)),
                        "swap_blocks");
  }
  return dev.record(stream, std::move(on_done));
#else
  no_cuda();
#endif
}

} // namespace kvactor::kernels
