#include "actors/runner/precision.hpp"

namespace kvactor {

result<precision> choose_precision(std::optional<model::dtype> weights,
                                   std::optional<model::dtype> activations, bool on_cuda,
                                   const std::function<result<model::dtype>()>& stored) {
  using model::dtype;
  if (activations == dtype::bf16 && weights == dtype::f32)
    return error{"engine config: weights 'f32' with activations 'bf16': bf16 activations multiply "
                 "bf16 matrices (weights 'bf16' or 'auto')"};
  std::optional<dtype> matrices = activations == dtype::bf16 ? dtype::bf16 : weights;
  if (!matrices) {
    auto s = stored();
    if (!s)
      return s.error();
    matrices = *s == dtype::bf16 ? dtype::bf16 : dtype::f32;
  }
  if (!activations)
    activations = on_cuda && *matrices == dtype::bf16 ? dtype::bf16 : dtype::f32;
  return precision{*matrices, *activations};
}

} // namespace kvactor
