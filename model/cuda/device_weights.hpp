#pragma once
// device_weights: a model's weights resident on a CUDA device, in one
// allocation laid out by weight_plan (q|k|v of a layer form one matrix):
// matrices in fp32 or bf16 (the plan's `matrices`), norm weights in fp32.
// Uploaded once when the forward pass is created; each slot is converted on
// the host on the way (weight_plan's device_image: bf16 or f16 widened
// exactly to fp32, bf16 copied, fp32 rounded to bf16), in chunks through a
// bounded pinned staging buffer, on the stream the forward pass computes on.

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/device.hpp"
#include "base/result.hpp"
#include "model/forward/weight_plan.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

class device_weights {
public:
  // Allocates device memory of `dev` (a CUDA device) and copies every
  // weight on `stream`, its matrices in `matrices` (f32 or bf16), waiting
  // for the copies (load time, not a step).
  static result<device_weights> upload(const model_weights& weights, dtype matrices,
                                       kernels::device& dev, cudaStream_t stream);

  // The allocation; slot s of plan() is at data() + s.offset.
  const std::byte* data() const { return static_cast<const std::byte*>(memory_.data()); }
  const weight_plan& plan() const { return plan_; }
  // Device bytes the weights take (the plan's total, alignment included).
  std::size_t num_bytes() const { return plan_.total_bytes; }

private:
  device_weights() = default;

  weight_plan plan_;
  kernels::buffer memory_;
};

} // namespace kvactor::model
