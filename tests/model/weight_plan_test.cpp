// weight_plan: the device layout of the weights (fused q|k|v, alignment, no
// overlaps, tied LM head) and the exact widening the upload uses, on the
// small Llama-, Qwen2- and Qwen3-style models of the forward tests. No device
// needed.
#include "model/forward/weight_plan.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <span>

#include "forward_harness.hpp"

namespace kvactor::model {
namespace {

using test_support::tiny_model;

class weight_plan_test : public ::testing::TestWithParam<architecture> {};

TEST_P(weight_plan_test, slots_are_aligned_disjoint_and_q_k_v_fused) {
  const model_weights& w = tiny_model(GetParam()).weights;
  const weight_plan p = weight_plan::make(w);
  ASSERT_EQ(p.layers.size(), w.layers().size());
  for (const layer_slots& l : p.layers) {
    EXPECT_EQ(l.k_proj.offset, l.q_proj.offset + l.q_proj.bytes);
    EXPECT_EQ(l.v_proj.offset, l.k_proj.offset + l.k_proj.bytes);
    if (l.q_bias) { // Qwen2: q|k|v biases fused as well
      EXPECT_EQ(l.k_bias->offset, l.q_bias->offset + l.q_bias->bytes);
      EXPECT_EQ(l.v_bias->offset, l.k_bias->offset + l.k_bias->bytes);
    }
  }
  const std::vector<weight_slot> all = p.uploads();
  std::size_t end = 0;
  for (const weight_slot& s : all) {
    EXPECT_EQ(s.bytes, static_cast<std::size_t>(s.num_elements()) * sizeof(float));
    EXPECT_GE(s.offset, end) << "overlap";
    end = s.offset + s.bytes;
  }
  EXPECT_GE(p.total_bytes, end);
  EXPECT_EQ(p.total_bytes % weight_plan::alignment, 0u);
  // Everything but k_proj and v_proj (which follow q_proj) and the k and v
  // biases starts aligned.
  std::size_t num_unaligned = 0;
  for (const weight_slot& s : all) num_unaligned += s.offset % weight_plan::alignment != 0;
  std::size_t num_fused_followers = 0;
  for (const layer_slots& l : p.layers) {
    for (const weight_slot* s : {&l.k_proj, &l.v_proj})
      num_fused_followers += s->offset % weight_plan::alignment != 0;
    for (const auto* s : {&l.k_bias, &l.v_bias})
      num_fused_followers += *s && (*s)->offset % weight_plan::alignment != 0;
  }
  EXPECT_EQ(num_unaligned, num_fused_followers);
}

TEST_P(weight_plan_test, every_tensor_is_uploaded_once) {
  const loaded_model& m = tiny_model(GetParam());
  const weight_plan p = weight_plan::make(m.weights);
  const bool tied = m.config.tie_word_embeddings;
  const bool qk_norm = m.config.has_qk_norm();
  const bool qkv_bias = m.config.has_qkv_bias();
  const std::size_t per_layer = 9 + (qk_norm ? 2 : 0) + (qkv_bias ? 3 : 0);
  EXPECT_EQ(p.uploads().size(), 1 + per_layer * p.layers.size() + 1 + (tied ? 0 : 1));
  EXPECT_EQ(p.lm_head.offset == p.embed_tokens.offset, tied);
  EXPECT_EQ(p.lm_head.source.data, m.weights.lm_head().data);
  for (const layer_slots& l : p.layers) {
    EXPECT_EQ(l.q_norm.has_value(), qk_norm);
    EXPECT_EQ(l.k_norm.has_value(), qk_norm);
    EXPECT_EQ(l.q_bias.has_value(), qkv_bias);
    EXPECT_EQ(l.v_bias.has_value(), qkv_bias);
  }
}

TEST_P(weight_plan_test, widening_bf16_matrices_gives_the_fp32_values_exactly) {
  // The tiny models are bf16 on disk: the fp32 load widened them at load.
  const model_weights& f32 = tiny_model(GetParam(), dtype::f32).weights;
  const model_weights& bf16 = tiny_model(GetParam(), dtype::bf16).weights;
  ASSERT_EQ(bf16.layers()[0].q_proj.type, dtype::bf16);
  const weight_view& want = f32.layers()[1].down_proj;
  const weight_view& have = bf16.layers()[1].down_proj;
  std::vector<float> got(static_cast<std::size_t>(have.num_elements()));
  // In chunks of odd sizes, as an upload through a bounded staging buffer does.
  for (int64_t first = 0; first < have.num_elements(); first += 997) {
    const auto n = static_cast<std::size_t>(std::min<int64_t>(997, have.num_elements() - first));
    widen_to_f32(have, first, std::span<float>(got).subspan(static_cast<std::size_t>(first), n));
  }
  EXPECT_EQ(got, std::vector<float>(want.f32(), want.f32() + want.num_elements()));
  std::vector<float> norm(static_cast<std::size_t>(f32.norm().num_elements()));
  widen_to_f32(f32.norm(), 0, norm);
  EXPECT_EQ(norm,
            std::vector<float>(f32.norm().f32(), f32.norm().f32() + f32.norm().num_elements()));
}

TEST_P(weight_plan_test, a_bf16_plan_holds_matrices_in_half_the_bytes_and_norms_in_fp32) {
  const model_weights& w = tiny_model(GetParam(), dtype::bf16).weights;
  const weight_plan f32 = weight_plan::make(w, dtype::f32);
  const weight_plan bf16 = weight_plan::make(w, dtype::bf16);
  EXPECT_EQ(bf16.matrices, dtype::bf16);
  std::size_t matrix_elements = 0, norm_elements = 0;
  for (const weight_slot& s : bf16.uploads()) {
    const bool matrix = s.source.rank == 2;
    EXPECT_EQ(s.type, matrix ? dtype::bf16 : dtype::f32);
    EXPECT_EQ(s.bytes, static_cast<std::size_t>(s.num_elements()) * (matrix ? 2u : 4u));
    (matrix ? matrix_elements : norm_elements) += static_cast<std::size_t>(s.num_elements());
  }
  for (const layer_slots& l : bf16.layers) { // still one fused q|k|v matrix
    EXPECT_EQ(l.k_proj.offset, l.q_proj.offset + l.q_proj.bytes);
    EXPECT_EQ(l.v_proj.offset, l.k_proj.offset + l.k_proj.bytes);
    if (l.q_bias) { // Qwen2: q|k|v biases fused as well
      EXPECT_EQ(l.k_bias->offset, l.q_bias->offset + l.q_bias->bytes);
      EXPECT_EQ(l.v_bias->offset, l.k_bias->offset + l.k_bias->bytes);
    }
  }
  // Alignment adds under 256 bytes per slot to the element bytes.
  const std::size_t num_slots = bf16.uploads().size();
  EXPECT_GE(bf16.total_bytes, 2 * matrix_elements + 4 * norm_elements);
  EXPECT_LT(bf16.total_bytes,
            2 * matrix_elements + 4 * norm_elements + num_slots * weight_plan::alignment);
  EXPECT_GE(f32.total_bytes, 4 * (matrix_elements + norm_elements));
  EXPECT_LT(f32.total_bytes,
            4 * (matrix_elements + norm_elements) + num_slots * weight_plan::alignment);
  std::printf(
    "device weights of the %s test model: %zu bytes with fp32 matrices, %zu with bf16 (%.3f)\n",
    std::string(architecture_name(GetParam())).c_str(), f32.total_bytes, bf16.total_bytes,
    double(bf16.total_bytes) / double(f32.total_bytes));
}

TEST_P(weight_plan_test, the_bf16_image_is_the_checkpoint_or_the_fp32_values_rounded) {
  const model_weights& w16 = tiny_model(GetParam(), dtype::bf16).weights;
  const model_weights& w32 = tiny_model(GetParam(), dtype::f32).weights;
  // A bf16 source is copied as it is.
  const weight_slot s16 = weight_plan::make(w16, dtype::bf16).layers[0].gate_proj;
  std::vector<uint16_t> got(static_cast<std::size_t>(s16.num_elements()));
  device_image(s16, 0, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(got, std::vector<uint16_t>(s16.source.bf16(), s16.source.bf16() + s16.num_elements()));
  // An fp32 source is rounded (these values came from bf16: the same bits),
  // in chunks from an offset.
  const weight_slot s32 = weight_plan::make(w32, dtype::bf16).layers[0].gate_proj;
  std::vector<uint16_t> rounded(got.size());
  for (int64_t first = 0; first < s32.num_elements(); first += 997) {
    const auto n = static_cast<std::size_t>(std::min<int64_t>(997, s32.num_elements() - first));
    device_image(
      s32, first,
      std::as_writable_bytes(std::span(rounded).subspan(static_cast<std::size_t>(first), n)));
  }
  EXPECT_EQ(rounded, got);
  // A norm weight stays fp32 in a bf16 plan.
  const weight_slot norm = weight_plan::make(w16, dtype::bf16).norm;
  std::vector<float> n32(static_cast<std::size_t>(norm.num_elements()));
  device_image(norm, 0, std::as_writable_bytes(std::span(n32)));
  EXPECT_EQ(n32, std::vector<float>(norm.source.f32(), norm.source.f32() + norm.num_elements()));
}

INSTANTIATE_TEST_SUITE_P(styles, weight_plan_test,
                         ::testing::Values(architecture::llama, architecture::qwen2,
                                           architecture::qwen3),
                         [](const auto& p) { return std::string(architecture_name(p.param)); });

} // namespace
} // namespace kvactor::model
