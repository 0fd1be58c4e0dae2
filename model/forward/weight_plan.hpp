#pragma once
// weight_plan: where every weight of a model goes in one device allocation,
// worked out on the host (no device needed, so it is tested in CI). The
// device holds every weight in fp32, the dtype the forward pass computes
// with; bf16 matrices are widened once at upload (exact).
//
//   embed_tokens                     [vocab, hidden]
//   per layer:
//     input_layernorm                [hidden]
//     q_proj ┐ back to back: one     [q_size, hidden]
//     k_proj ├ fused matrix          [kv_size, hidden]
//     v_proj ┘ [q_size + 2 kv_size, hidden]  [kv_size, hidden]
//     q_norm, k_norm (Qwen3)         [head_dim]
//     o_proj                         [hidden, q_size]
//     post_attention_layernorm       [hidden]
//     gate_proj, up_proj             [intermediate, hidden]
//     down_proj                      [hidden, intermediate]
//   norm                             [hidden]
//   lm_head                          [vocab, hidden]; tied: the embedding's slot
//
// Every slot but k_proj and v_proj starts at a multiple of 256 bytes.
// NOTE: fp32 on the device because cuBLAS multiplies bf16 only by bf16
// (cublasGemmEx takes one dtype for A and B); bf16 weights times fp32
// activations would round the activations, which the CPU path never does.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/weights.hpp"

namespace kvactor::model {

/// One weight: its host view and its fp32 place on the device.
struct weight_slot {
  weight_view source;
  std::size_t offset = 0; // bytes from the start of the device allocation
  std::size_t bytes = 0;  // num_elements * 4

  std::int64_t num_elements() const { return source.num_elements(); }
};

struct layer_slots {
  weight_slot input_layernorm;
  weight_slot q_proj, k_proj, v_proj; // contiguous: q_proj.offset starts the fused [q + 2 kv, hidden]
  std::optional<weight_slot> q_norm, k_norm;
  weight_slot o_proj;
  weight_slot post_attention_layernorm;
  weight_slot gate_proj, up_proj, down_proj;
};

struct weight_plan {
  static constexpr std::size_t alignment = 256;

  weight_slot embed_tokens;
  std::vector<layer_slots> layers;
  weight_slot norm;
  weight_slot lm_head; // same offset as embed_tokens when the model ties them
  std::size_t total_bytes = 0;

  static weight_plan make(const model_weights& weights);

  /// Every distinct slot once, in offset order: what an upload copies.
  std::vector<weight_slot> uploads() const;
};

/// Elements [first, first + out.size()) of `w`, widened to fp32 (exact).
void widen_to_f32(const weight_view& w, std::int64_t first, std::span<float> out);

} // namespace kvactor::model
