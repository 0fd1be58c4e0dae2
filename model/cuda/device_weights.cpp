#include "model/cuda/device_weights.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/cuda/cuda_check.hpp"

namespace kvactor::model {
namespace {

// NOTE: 4 Mi floats (16 MiB) of staging bound the host memory the upload
// needs beyond the mapped checkpoint, whatever the size of one tensor.
constexpr std::int64_t staging_floats = std::int64_t{1} << 22;

status copy_slot(const weight_slot& s, std::byte* base, std::vector<float>& staging, cudaStream_t stream) {
  std::byte* dst = base + s.offset;
  if (s.source.type == dtype::f32) {
    // NOTE: pageable source: the runtime stages it; the synchronize below
    // ends the copy before the mapping can go away.
    KVACTOR_CUDA_TRY(cudaMemcpyAsync(dst, s.source.data, s.bytes, cudaMemcpyHostToDevice, stream));
    KVACTOR_CUDA_TRY(cudaStreamSynchronize(stream));
    return {};
  }
  for (std::int64_t first = 0; first < s.num_elements(); first += staging_floats) {
    const auto n = static_cast<std::size_t>(std::min(staging_floats, s.num_elements() - first));
    widen_to_f32(s.source, first, std::span<float>(staging.data(), n));
    KVACTOR_CUDA_TRY(cudaMemcpyAsync(dst + static_cast<std::size_t>(first) * sizeof(float), staging.data(),
                                     n * sizeof(float), cudaMemcpyHostToDevice, stream));
    KVACTOR_CUDA_TRY(cudaStreamSynchronize(stream)); // the staging buffer is reused next
  }
  return {};
}

} // namespace

result<device_weights> device_weights::upload(const model_weights& weights, kernels::device& dev,
                                              cudaStream_t stream) {
  device_weights w;
  w.plan_ = weight_plan::make(weights);
  auto memory = dev.allocate(kernels::memory_kind::device, w.plan_.total_bytes);
  if (!memory)
    return make_error("forward pass (cuda)", "not enough device memory for the weights (" +
                                                 std::to_string(w.plan_.total_bytes) + " bytes in fp32)");
  w.memory_ = std::move(*memory);
  std::vector<float> staging;
  for (const weight_slot& s : w.plan_.uploads()) {
    if (s.source.type != dtype::f32 && staging.empty()) staging.resize(static_cast<std::size_t>(staging_floats));
    if (const status ok = copy_slot(s, static_cast<std::byte*>(w.memory_.data()), staging, stream); !ok)
      return ok.error();
  }
  return w;
}

} // namespace kvactor::model
