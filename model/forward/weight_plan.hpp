#pragma once
// weight_plan: where every weight of a model goes in one device allocation,
// worked out on the host (no device needed, so it is tested in CI). The
// matrices (embedding, projections, LM head) are held in the plan's
// `matrices` dtype: fp32 (a bf16 checkpoint widened once at upload, exact)
// or bf16 (what the products take with bf16 activations: half the bytes; an
// fp32 matrix rounded to nearest even at upload). Norm weights stay fp32.
//
//   embed_tokens                     [vocab, hidden]
//   per layer:
//     input_layernorm                [hidden]
//     q_proj ┐ back to back: one     [q_size, hidden]
//     k_proj ├ fused matrix          [kv_size, hidden]
//     v_proj ┘ [q_size + 2 kv_size, hidden]  [kv_size, hidden]
//     q_bias ┐ back to back (Qwen2)  [q_size]
//     k_bias ├ [q_size + 2 kv_size]  [kv_size]
//     v_bias ┘                       [kv_size]
//     q_norm, k_norm (Qwen3)         [head_dim]
//     o_proj                         [hidden, q_size]
//     post_attention_layernorm       [hidden]
//     gate_proj, up_proj             [intermediate, hidden]
//     down_proj                      [hidden, intermediate]
//   norm                             [hidden]
//   lm_head                          [vocab, hidden]; tied: the embedding's slot
//
// Every slot but k_proj, v_proj, k_bias and v_bias starts at a multiple of 256 bytes.
// NOTE: bf16 matrices go with bf16 activations only: cuBLAS multiplies bf16
// only by bf16 (cublasGemmEx takes one dtype for A and B), so bf16 weights
// mean rounding the products' input rows to bf16, which the fp32 pass never
// does (docs/model/cuda.md).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/weights.hpp"

namespace kvactor::model {

// One weight: its host view and its place and dtype on the device.
struct weight_slot {
  weight_view source;
  dtype type = dtype::f32; // on the device: f32, or bf16 for a matrix of a bf16 plan
  std::size_t offset = 0;  // bytes from the start of the device allocation
  std::size_t bytes = 0;   // num_elements * dtype_size(type)

  int64_t num_elements() const { return source.num_elements(); }
};

struct layer_slots {
  weight_slot input_layernorm;
  // contiguous: q_proj.offset starts the fused [q + 2 kv, hidden]
  weight_slot q_proj, k_proj, v_proj;
  // contiguous: q_bias.offset starts the fused [q + 2 kv] bias (Qwen2)
  std::optional<weight_slot> q_bias, k_bias, v_bias;
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
  dtype matrices = dtype::f32;
  std::size_t total_bytes = 0;

  // `matrices`: f32 or bf16.
  static weight_plan make(const model_weights& weights, dtype matrices = dtype::f32);

  // Every distinct slot once, in offset order: what an upload copies.
  std::vector<weight_slot> uploads() const;
};

// Elements [first, first + out.size()) of `w`, widened to fp32 (exact).
void widen_to_f32(const weight_view& w, int64_t first, std::span<float> out);

// Elements [first, first + out.size() / dtype_size(s.type)) of the slot's
// source in the slot's device dtype: widened to fp32, or bf16 (copied, or
// rounded to nearest even from fp32). What an upload writes.
void device_image(const weight_slot& s, int64_t first, std::span<std::byte> out);

} // namespace kvactor::model
