// Bad model folders give clear errors naming the file and the key or tensor.

#include "model/model_folder.hpp"

#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/safetensors_writer.hpp"
#include "model/tiny/tiny_model.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;
using test_support::write_file;

tiny::tiny_options small() {
  tiny::tiny_options o;
  o.hidden_size = 32;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = 8;
  o.intermediate_size = 64;
  o.vocab_size = 400;
  return o;
}

// A good folder, then `spoil` applied to it; returns the load error.
template <class F>
std::string error_after(F spoil) {
  temp_dir dir;
  EXPECT_TRUE(tiny::write_model(dir.path(), small()));
  spoil(dir);
  auto m = load_model_folder(dir.path());
  EXPECT_FALSE(m);
  return m ? std::string() : m.error().message;
}

TEST(model_folder, good_folder_loads) {
  temp_dir dir;
  ASSERT_TRUE(tiny::write_model(dir.path(), small()));
  auto m = load_model_folder(dir.path());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->weights.layers().size(), 2u);
}

TEST(model_folder, default_tiny_model_of_the_build_loads) {
  // Written by the build with kvactor-make-tiny's defaults.
  for (dtype want : {dtype::f32, dtype::bf16}) {
    auto m = load_model_folder(KVACTOR_TINY_MODEL_DIR, want);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->config.arch, architecture::llama);
    EXPECT_EQ(m->config.hidden_size, 512);
    EXPECT_EQ(m->config.num_hidden_layers, 8);
    EXPECT_EQ(m->config.num_attention_heads, 8);
    EXPECT_EQ(m->config.num_key_value_heads, 4);
    EXPECT_EQ(m->config.head_dim, 64);
    EXPECT_EQ(m->config.intermediate_size, 1536);
    EXPECT_EQ(m->config.vocab_size, 4096);
    EXPECT_EQ(m->tok.vocab_size(), 4096u);
    EXPECT_EQ(m->weights.layers().size(), 8u);
    EXPECT_EQ(m->weights.layers()[7].down_proj.cols(), 1536);
    // bf16 on disk: the bf16 load maps the matrices in place.
    EXPECT_EQ(m->weights.num_owned_bytes() < (1u << 20), want == dtype::bf16);
  }
}

TEST(model_folder, missing_folder_and_files) {
  auto m = load_model_folder("/nonexistent/kvactor-model");
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().message, HasSubstr("/nonexistent/kvactor-model: model folder not found"));
  EXPECT_THAT(error_after([](const temp_dir& d) { std::filesystem::remove(d / "config.json"); }),
              HasSubstr("config.json: file not found"));
  EXPECT_THAT(error_after([](const temp_dir& d) { std::filesystem::remove(d / "tokenizer.json"); }),
              HasSubstr("tokenizer.json: file not found"));
  EXPECT_THAT(
    error_after([](const temp_dir& d) { std::filesystem::remove(d / "model.safetensors"); }),
    HasSubstr("no *.safetensors file"));
}

TEST(model_folder, bad_json) {
  EXPECT_THAT(
    error_after([](const temp_dir& d) { write_file(d / "config.json", "{\"hidden_size\": 32,"); }),
    HasSubstr("config.json: invalid JSON"));
  EXPECT_THAT(error_after([](const temp_dir& d) {
                write_file(d / "tokenizer.json",
                           "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\"");
              }),
              HasSubstr("tokenizer.json: invalid JSON"));
  EXPECT_THAT(
    error_after([](const temp_dir& d) { write_file(d / "tokenizer.json", "{\"model\": 3}"); }),
    HasSubstr("tokenizer.json: key 'model': expected an object"));
}

TEST(model_folder, self_contradicting_config) {
  auto o = small();
  o.num_kv_heads = 3; // does not divide 4 heads
  const std::string cfg = tiny::config_json(o);
  EXPECT_THAT(
    error_after([&](const temp_dir& d) { write_file(d / "config.json", cfg); }),
    HasSubstr("config.json: key 'num_key_value_heads': 3 does not divide num_attention_heads 4"));
}

TEST(model_folder, wrong_shape) {
  auto o = small();
  o.intermediate_size = 80;
  const std::string cfg = tiny::config_json(o);
  const auto msg = error_after([&](const temp_dir& d) { write_file(d / "config.json", cfg); });
  EXPECT_THAT(
    msg,
    HasSubstr("model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight': shape [64, 32] "
              "disagrees with the config (expected [80, 32]"));
}

TEST(model_folder, missing_tensor) {
  const auto msg = error_after([](const temp_dir& d) {
    safetensors_writer w;
    for (const auto& spec : tiny::tensor_specs(small()))
      if (spec.name != "model.norm.weight")
        w.add_f32(spec.name, dtype::bf16, spec.shape, tiny::tensor_values(small(), spec));
    ASSERT_TRUE(w.write(d / "model.safetensors"));
  });
  EXPECT_THAT(msg, HasSubstr("tensor 'model.norm.weight': missing"));
}

TEST(model_folder, truncated_safetensors) {
  const auto msg = error_after([](const temp_dir& d) {
    const auto p = d / "model.safetensors";
    std::filesystem::resize_file(p, std::filesystem::file_size(p) / 2);
  });
  EXPECT_THAT(msg, HasSubstr("model.safetensors: tensor '"));
  EXPECT_THAT(msg, HasSubstr("truncated"));
}

TEST(model_folder, unsupported_dtype) {
  const auto msg = error_after([](const temp_dir& d) {
    // The embedding stored as F64: a dtype the format has and kvactor refuses.
    safetensors_writer w;
    for (const auto& spec : tiny::tensor_specs(small())) {
      const auto v = tiny::tensor_values(small(), spec);
      if (spec.name == "model.embed_tokens.weight") {
        std::vector<std::byte> bytes(v.size() * 8);
        // placeholder size
        w.add(spec.name, dtype::f32, {spec.shape[0], spec.shape[1] * 2}, std::move(bytes));
      } else {
        w.add_f32(spec.name, dtype::bf16, spec.shape, v);
      }
    }
    ASSERT_TRUE(w.write(d / "model.safetensors"));
    // Rewrite the dtype and shape in the header in place (same length).
    std::string file;
    {
      std::ifstream in(d / "model.safetensors", std::ios::binary);
      file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string from = R"("model.embed_tokens.weight":{"dtype":"F32","shape":[400,64])";
    const std::string to = R"("model.embed_tokens.weight":{"dtype":"F64","shape":[400,32])";
    const auto pos = file.find(from);
    ASSERT_NE(pos, std::string::npos);
    file.replace(pos, from.size(), to);
    write_file(d / "model.safetensors", file);
  });
  EXPECT_THAT(
    msg,
    HasSubstr("model.safetensors: tensor 'model.embed_tokens.weight': unsupported dtype 'F64'"));
}

TEST(model_folder, tokenizer_larger_than_the_model_vocabulary) {
  auto o = small();
  o.vocab_size = 300;
  const std::string cfg = tiny::config_json(o);
  EXPECT_THAT(error_after([&](const temp_dir& d) { write_file(d / "config.json", cfg); }),
              HasSubstr("tokenizer.json: has ids up to 399 but config.json vocab_size is 300"));
}

} // namespace
} // namespace kvactor::model
