#include "model/cuda/device_weights.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/cuda/cuda_check.hpp"

namespace kvactor::model {
namespace {

// NOTE: 4 Mi floats (16 MiB) of pinned staging bound the host memory the
// upload needs beyond the mapped checkpoint, whatever the size of one tensor.
constexpr std::int64_t staging_floats = std::int64_t{1} << 22;

// Pinned host memory of its own (not the device's pinned pool, which holds
// the swap space), freed when the upload is done.
class pinned_staging {
public:
  pinned_staging() = default;
  ~pinned_staging() {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
  }
  pinned_staging(const pinned_staging&) = delete;
  pinned_staging& operator=(const pinned_staging&) = delete;

  status allocate(std::size_t num_floats) {
    KVACTOR_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&data_), num_floats * sizeof(float), cudaHostAllocDefault));
    num_floats_ = static_cast<std::int64_t>(num_floats);
    return {};
  }
  float* data() const { return data_; }
  std::int64_t num_floats() const { return num_floats_; }

private:
  float* data_ = nullptr;
  std::int64_t num_floats_ = 0;
};

// NOTE: every source goes through pinned staging on `stream`: an async copy
// from pageable memory (the mapped checkpoint) would block and stage
// internally, and a synchronous cudaMemcpy runs on the legacy stream, which
// the non-blocking compute stream does not wait for.
status copy_slot(const weight_slot& s, std::byte* base, const pinned_staging& staging, cudaStream_t stream) {
  std::byte* dst = base + s.offset;
  for (std::int64_t first = 0; first < s.num_elements(); first += staging.num_floats()) {
    const auto n = static_cast<std::size_t>(std::min(staging.num_floats(), s.num_elements() - first));
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
  std::int64_t largest = 1;
  for (const weight_slot& s : w.plan_.uploads()) largest = std::max(largest, s.num_elements());
  pinned_staging staging;
  if (const status ok = staging.allocate(static_cast<std::size_t>(std::min(staging_floats, largest))); !ok)
    return ok.error();
  for (const weight_slot& s : w.plan_.uploads()) {
    if (const status ok = copy_slot(s, static_cast<std::byte*>(w.memory_.data()), staging, stream); !ok)
      return ok.error();
  }
  return w;
}

} // namespace kvactor::model
