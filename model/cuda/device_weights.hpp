#pragma once
// device_weights: a model's weights resident on a CUDA device, fp32, in one
// allocation laid out by weight_plan (q|k|v of a layer form one matrix).
// Uploaded once when the forward pass is created; bf16 or f16 matrices are
// widened on the host on the way (exact), in chunks through a bounded
// pinned staging buffer, on the stream the forward pass computes on.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/device.hpp"
#include "kernels/result.hpp"
#include "model/forward/weight_plan.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

class device_weights {
public:
  /// Allocates device memory of `dev` (a CUDA device) and copies every
  /// weight on `stream`, waiting for the copies (load time, not a step).
  static result<device_weights> upload(const model_weights& weights, kernels::device& dev, cudaStream_t stream);

  /// The allocation; slot s of plan() is at data() + s.offset.
  const std::byte* data() const { return static_cast<const std::byte*>(memory_.data()); }
  const weight_plan& plan() const { return plan_; }
  std::size_t num_bytes() const { return plan_.total_bytes; }

private:
  device_weights() = default;

  weight_plan plan_;
  kernels::buffer memory_;
};

} // namespace kvactor::model
