#include "model/cuda/device_weights.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/cuda/cuda_check.hpp"

namespace kvactor::model {
namespace {

// NOTE: 16 MiB of pinned staging bound the host memory the upload needs
// beyond the mapped checkpoint, whatever the size of one tensor.
constexpr std::size_t staging_bytes = std::size_t{16} << 20;

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

  status allocate(std::size_t bytes) {
    KVACTOR_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&data_), bytes, cudaHostAllocDefault));
    bytes_ = bytes;
    return {};
  }
  std::byte* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// NOTE: every source goes through pinned staging on `stream`: an async copy
// from pageable memory (the mapped checkpoint) would block and stage
// internally, and a synchronous cudaMemcpy runs on the legacy stream, which
// the non-blocking compute stream does not wait for.
status copy_slot(const weight_slot& s, std::byte* base, const pinned_staging& staging,
                 cudaStream_t stream) {
  std::byte* dst = base + s.offset;
  const std::size_t size = dtype_size(s.type);
  const auto chunk = static_cast<int64_t>(staging.bytes() / size);
  for (int64_t first = 0; first < s.num_elements(); first += chunk) {
    const auto bytes = static_cast<std::size_t>(std::min(chunk, s.num_elements() - first)) * size;
    device_image(s, first, std::span<std::byte>(staging.data(), bytes));
    KVACTOR_CUDA_TRY(cudaMemcpyAsync(dst + static_cast<std::size_t>(first) * size, staging.data(),
                                     bytes, cudaMemcpyHostToDevice, stream));
    KVACTOR_CUDA_TRY(cudaStreamSynchronize(stream)); // the staging buffer is reused next
  }
  return {};
}

} // namespace

result<device_weights> device_weights::upload(const model_weights& weights, dtype matrices,
                                              kernels::device& dev, cudaStream_t stream) {
  device_weights w;
  w.plan_ = weight_plan::make(weights, matrices);
  auto memory = dev.allocate(kernels::memory_kind::device, w.plan_.total_bytes);
  if (!memory)
    return error_in("forward pass (cuda)", "not enough device memory for the weights (" +
                                                 std::to_string(w.plan_.total_bytes) + " bytes, " +
                                                 kernels::dtype_name(matrices) + " matrices)");
  w.memory_ = std::move(*memory);
  std::size_t largest = sizeof(float);
  for (const weight_slot& s : w.plan_.uploads()) largest = std::max(largest, s.bytes);
  pinned_staging staging;
  if (const status ok = staging.allocate(std::min(staging_bytes, largest)); !ok) return ok.error();
  for (const weight_slot& s : w.plan_.uploads()) {
    if (const status ok = copy_slot(s, static_cast<std::byte*>(w.memory_.data()), staging, stream);
        !ok)
      return ok.error();
  }
  return w;
}

} // namespace kvactor::model
