#include "model/weights.hpp"

#include <fstream>
#include <iterator>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/safetensors_writer.hpp"
#include "model/tiny/tiny_model.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

tiny::tiny_options small_options(architecture arch, dtype on_disk, bool tied) {
  tiny::tiny_options o;
  o.arch = arch;
  o.hidden_size = 32;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = arch == architecture::qwen3 ? 16 : 8;
  o.intermediate_size = 48;
  o.vocab_size = 300;
  o.on_disk = on_disk;
  o.tie_embeddings = tied;
  o.seed = 7;
  return o;
}

void write_folder(const temp_dir& dir, const tiny::tiny_options& o) {
  test_support::write_file(dir / "config.json", tiny::config_json(o));
  ASSERT_TRUE(tiny::write_weights(dir / "model.safetensors", o));
}

result<model_weights> load(const temp_dir& dir, dtype want) {
  auto config = load_config(dir / "config.json");
  if (!config) return config.error();
  auto files = safetensors_set::open_folder(dir.path());
  if (!files) return files.error();
  return model_weights::load(*config, std::move(*files), want);
}

float rounded(float x, dtype t) {
  if (t == dtype::bf16) return bf16_to_f32(f32_to_bf16(x));
  if (t == dtype::f16) return f16_to_f32(f32_to_f16(x));
  return x;
}

// Element i of a view as fp32.
float at(const weight_view& v, std::size_t i) {
  return v.type == dtype::f32 ? v.f32()[i] : bf16_to_f32(v.bf16()[i]);
}

struct round_trip_case {
  architecture arch;
  dtype on_disk;
  dtype want;
  bool tied;
};

class weights_round_trip : public ::testing::TestWithParam<round_trip_case> {};

TEST_P(weights_round_trip, values_match_the_generator) {
  const auto p = GetParam();
  const auto o = small_options(p.arch, p.on_disk, p.tied);
  temp_dir dir;
  write_folder(dir, o);
  auto w = load(dir, p.want);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_EQ(w->layers().size(), 2u);
  EXPECT_EQ(w->matrix_dtype(), p.want);

  // Every tensor the generator wrote, found through the typed views.
  std::map<std::string, const weight_view*> by_name = {
      {"model.embed_tokens.weight", &w->embed_tokens()}, {"model.norm.weight", &w->norm()}};
  if (!p.tied) by_name["lm_head.weight"] = &w->lm_head();
  for (std::size_t i = 0; i < w->layers().size(); ++i) {
    const auto& l = w->layers()[i];
    const std::string pre = "model.layers." + std::to_string(i) + ".";
    by_name[pre + "input_layernorm.weight"] = &l.input_layernorm;
    by_name[pre + "self_attn.q_proj.weight"] = &l.q_proj;
    by_name[pre + "self_attn.k_proj.weight"] = &l.k_proj;
    by_name[pre + "self_attn.v_proj.weight"] = &l.v_proj;
    by_name[pre + "self_attn.o_proj.weight"] = &l.o_proj;
    by_name[pre + "post_attention_layernorm.weight"] = &l.post_attention_layernorm;
    by_name[pre + "mlp.gate_proj.weight"] = &l.gate_proj;
    by_name[pre + "mlp.up_proj.weight"] = &l.up_proj;
    by_name[pre + "mlp.down_proj.weight"] = &l.down_proj;
    ASSERT_EQ(l.q_bias.has_value(), p.arch == architecture::qwen2);
    if (l.q_bias) {
      by_name[pre + "self_attn.q_proj.bias"] = &*l.q_bias;
      by_name[pre + "self_attn.k_proj.bias"] = &*l.k_bias;
      by_name[pre + "self_attn.v_proj.bias"] = &*l.v_bias;
    }
    ASSERT_EQ(l.q_norm.has_value(), p.arch == architecture::qwen3);
    if (l.q_norm) {
      by_name[pre + "self_attn.q_norm.weight"] = &*l.q_norm;
      by_name[pre + "self_attn.k_norm.weight"] = &*l.k_norm;
    }
  }
  const auto specs = tiny::tensor_specs(o);
  ASSERT_EQ(specs.size(), by_name.size());
  for (const auto& spec : specs) {
    ASSERT_TRUE(by_name.count(spec.name)) << spec.name;
    const weight_view& v = *by_name[spec.name];
    EXPECT_EQ(v.type, spec.is_norm || spec.is_bias ? dtype::f32 : p.want) << spec.name;
    EXPECT_EQ(v.rank, static_cast<int>(spec.shape.size())) << spec.name;
    EXPECT_EQ(v.rows(), spec.shape[0]) << spec.name;
    if (spec.shape.size() == 2) {
      EXPECT_EQ(v.cols(), spec.shape[1]) << spec.name;
    }
    const auto expected = tiny::tensor_values(o, spec);
    ASSERT_EQ(static_cast<std::size_t>(v.num_elements()), expected.size()) << spec.name;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      // Disk rounding first, then (for bf16 views of f16/f32 data) the view's.
      const float want = rounded(rounded(expected[i], p.on_disk), v.type);
      ASSERT_EQ(at(v, i), want) << spec.name << "[" << i << "]";
    }
  }
  if (p.tied) {
    EXPECT_EQ(w->lm_head().data, w->embed_tokens().data);
  }
  // Same dtype on disk and in memory: the matrices stay in the mapping.
  if (p.on_disk == p.want) {
    // norms, Qwen3's q/k norms, Qwen2's biases (2 layers of 32 + 2 x 16)
    const std::size_t norm_bytes =
      4 * (32 * (2 * 2 + 1) + (p.arch == architecture::qwen3 ? 2 * 2 * 16 : 0) +
           (p.arch == architecture::qwen2 ? 2 * 64 : 0));
    EXPECT_EQ(w->num_owned_bytes(), p.want == dtype::f32 ? 0u : norm_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    model, weights_round_trip,
    ::testing::Values(round_trip_case{architecture::llama, dtype::bf16, dtype::f32, false},
                      round_trip_case{architecture::llama, dtype::bf16, dtype::bf16, true},
                      round_trip_case{architecture::qwen3, dtype::bf16, dtype::f32, true},
                      round_trip_case{architecture::qwen3, dtype::f16, dtype::bf16, false},
                      round_trip_case{architecture::qwen2, dtype::bf16, dtype::bf16, true},
                      round_trip_case{architecture::qwen2, dtype::f32, dtype::f32, false},
                      round_trip_case{architecture::llama, dtype::f32, dtype::f32, false},
                      round_trip_case{architecture::llama, dtype::f32, dtype::bf16, false}));

TEST(weights, misaligned_tensors_are_copied_not_used_in_place) {
  temp_dir dir;
  const auto o = small_options(architecture::llama, dtype::bf16, false);
  write_folder(dir, o);
  // One more header byte (a space, which the format allows) shifts every
  // tensor to an odd address in the mapping.
  std::string file;
  {
    std::ifstream in(dir / "model.safetensors", std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[i]);
  file.insert(8 + n, " ");
  ++n;
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  test_support::write_file(dir / "model.safetensors", file);

  auto w = load(dir, dtype::bf16);
  ASSERT_TRUE(w) << w.error().message;
  // an owned, aligned copy
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w->layers()[0].q_proj.data) % 64, 0u);
  const auto spec = tiny::tensor_specs(o)[2]; // layer 0 q_proj
  ASSERT_EQ(spec.name, "model.layers.0.self_attn.q_proj.weight");
  const auto want = tiny::tensor_values(o, spec);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(w->layers()[0].q_proj.bf16()[i], f32_to_bf16(want[i])) << i;
}

TEST(weights, shape_disagreeing_with_config_names_file_and_tensor) {
  temp_dir dir;
  auto o = small_options(architecture::llama, dtype::bf16, false);
  write_folder(dir, o);
  o.num_kv_heads = 4; // config now says 4 KV heads; the file has 2
  test_support::write_file(dir / "config.json", tiny::config_json(o));
  auto w = load(dir, dtype::f32);
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr((dir / "model.safetensors").string()));
  EXPECT_THAT(
    w.error().message,
    HasSubstr("tensor 'model.layers.0.self_attn.k_proj.weight': shape [16, 32] disagrees with "
              "the config (expected [32, 32]: num_key_value_heads * head_dim, hidden_size)"));
}

TEST(weights, missing_tensor_is_named) {
  temp_dir dir;
  const auto o = small_options(architecture::qwen3, dtype::bf16, false);
  test_support::write_file(dir / "config.json", tiny::config_json(o));
  safetensors_writer w;
  for (const auto& spec : tiny::tensor_specs(o))
    if (spec.name != "model.layers.1.self_attn.k_norm.weight")
      w.add_f32(spec.name, dtype::bf16, spec.shape, tiny::tensor_values(o, spec));
  ASSERT_TRUE(w.write(dir / "model.safetensors"));
  auto loaded = load(dir, dtype::f32);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message,
              HasSubstr("tensor 'model.layers.1.self_attn.k_norm.weight': missing"));
}

TEST(weights, untied_model_needs_lm_head) {
  temp_dir dir;
  auto o = small_options(architecture::llama, dtype::bf16, true);
  write_folder(dir, o); // no lm_head.weight in the file
  o.tie_embeddings = false;
  test_support::write_file(dir / "config.json", tiny::config_json(o));
  auto w = load(dir, dtype::f32);
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("tensor 'lm_head.weight': missing"));
}

TEST(weights, qwen3_weights_under_a_llama_config_are_refused) {
  temp_dir dir;
  auto o = small_options(architecture::qwen3, dtype::bf16, false);
  write_folder(dir, o);
  o.arch = architecture::llama;
  test_support::write_file(dir / "config.json", tiny::config_json(o));
  auto w = load(dir, dtype::f32);
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("q_norm.weight' present but config.json says llama"));
}

TEST(weights, qwen2_biases_under_another_config_are_refused) {
  temp_dir dir;
  auto o = small_options(architecture::qwen2, dtype::bf16, false);
  write_folder(dir, o);
  for (const architecture other : {architecture::llama, architecture::qwen3}) {
    o.arch = other;
    test_support::write_file(dir / "config.json", tiny::config_json(o));
    auto w = load(dir, dtype::f32);
    ASSERT_FALSE(w);
    EXPECT_THAT(w.error().message, HasSubstr("q_proj.bias' present but config.json says "));
    EXPECT_THAT(w.error().message, HasSubstr("(q/k/v biases are Qwen2's)"));
  }
}

} // namespace
} // namespace kvactor::model
