#pragma once
// The dtypes the forward pass keeps its matrices in and rounds its products'
// input rows to, from the engine configuration's `weights` and `activations`
// (each f32, bf16 or auto) and, where auto asks, the checkpoint's own.
//
//   activations auto: bf16 on a CUDA device whose matrices are bf16 (cuBLAS
//                     multiplies bf16 only by bf16, so this keeps a bf16
//                     checkpoint in bf16 on the GPU, as GPU engines do);
//                     else f32, exact.
//   weights auto:     bf16 with bf16 activations or a bf16 checkpoint, else f32.
//   bf16 activations with f32 weights is an error.

#include "base/result.hpp"
#include "model/dtype.hpp"

#include <functional>
#include <optional>

namespace kvactor {

struct precision {
  model::dtype matrices = model::dtype::f32;
  model::dtype activations = model::dtype::f32;
};

// weights, activations: nullopt for auto. stored: the checkpoint's matrix
// dtype, read only when an auto needs it.
result<precision> choose_precision(std::optional<model::dtype> weights,
                                   std::optional<model::dtype> activations, bool on_cuda,
                                   const std::function<result<model::dtype>()>& stored);

} // namespace kvactor
