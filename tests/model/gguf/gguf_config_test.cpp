// gguf_model_config: model_config from the metadata llama.cpp's converter
// writes, for llama, qwen2 and qwen3, and each refusal.

#include "model/gguf/gguf_config.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <span>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf/gguf_writer.hpp"
#include "tests/model/gguf/gguf_test_bytes.hpp"

namespace kvactor::model {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test_support::temp_dir;

std::vector<std::string> tokens(int n) {
  std::vector<std::string> out;
  // NOTE: append, not "t" + to_string(i): GCC 12 reports a false -Wrestrict.
  for (int i = 0; i < n; ++i) out.push_back(std::string("t").append(std::to_string(i)));
  return out;
}

std::vector<std::byte> f32_bytes(uint64_t n) { return std::vector<std::byte>(4 * n); }

// A Llama 3 style file: 64 wide, 4 heads of 16, 2 KV heads, 10 tokens.
// `skip` names keys to leave out (by their last part for <arch>. keys).
gguf_writer llama(const std::string& arch = "llama", const std::vector<std::string>& skip = {}) {
  gguf_writer w;
  auto keep = [&](const std::string& k) {
    return std::find(skip.begin(), skip.end(), k) == skip.end();
  };
  const std::string p = arch + ".";
  if (keep("general.architecture")) w.add_string("general.architecture", arch);
  if (keep("embedding_length")) w.add_u32(p + "embedding_length", 64);
  if (keep("block_count")) w.add_u32(p + "block_count", 2);
  if (keep("feed_forward_length")) w.add_u64(p + "feed_forward_length", 128);
  if (keep("head_count")) w.add_u32(p + "attention.head_count", 4);
  if (keep("head_count_kv")) w.add_u32(p + "attention.head_count_kv", 2);
  if (keep("eps")) w.add_f32(p + "attention.layer_norm_rms_epsilon", 1e-5f);
  if (keep("freq_base")) w.add_f32(p + "rope.freq_base", 500000.0f);
  if (keep("context_length")) w.add_u32(p + "context_length", 4096);
  if (keep("tokens")) w.add_string_array("tokenizer.ggml.tokens", tokens(10));
  if (keep("bos")) w.add_u32("tokenizer.ggml.bos_token_id", 1);
  if (keep("eos")) w.add_u32("tokenizer.ggml.eos_token_id", 2);
  return w;
}

result<model_config> config_of(const temp_dir& dir, const gguf_writer& w) {
  auto f = test_support::open_bytes(dir, w.serialize());
  if (!f) return f.error();
  return gguf_model_config(*f);
}

std::string config_error(const temp_dir& dir, const gguf_writer& w) {
  auto c = config_of(dir, w);
  EXPECT_FALSE(c) << "the config was accepted";
  if (c) return {};
  EXPECT_THAT(c.error().message, HasSubstr((dir / "m.gguf").string()));
  return c.error().message;
}

TEST(gguf_config, llama_from_metadata) {
  temp_dir dir;
  gguf_writer w = llama();
  w.add_u32("tokenizer.ggml.eot_token_id", 3);
  w.add_u32("tokenizer.ggml.eom_token_id", 2); // the same as eos: listed once
  w.add_tensor("token_embd.weight", {64, 10}, ggml_type::f32, f32_bytes(640));
  auto c = config_of(dir, w);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->arch, architecture::llama);
  EXPECT_EQ(c->hidden_size, 64);
  EXPECT_EQ(c->num_hidden_layers, 2);
  EXPECT_EQ(c->intermediate_size, 128);
  EXPECT_EQ(c->num_attention_heads, 4);
  EXPECT_EQ(c->num_key_value_heads, 2);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->vocab_size, 10);
  EXPECT_EQ(c->max_position_embeddings, 4096);
  EXPECT_FLOAT_EQ(static_cast<float>(c->rms_norm_eps), 1e-5f);
  EXPECT_EQ(c->rope_theta, 500000.0);
  EXPECT_EQ(c->rope_scaling.type, rope_scaling::kind::none);
  EXPECT_TRUE(c->tie_word_embeddings); // no output.weight
  EXPECT_EQ(c->bos_token_id, 1);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int64_t>{2, 3}));
}

TEST(gguf_config, qwen2_defaults_and_untied_output) {
  temp_dir dir;
  gguf_writer w = llama("qwen2", {"head_count_kv", "freq_base", "context_length", "bos"});
  w.add_u32("qwen2.vocab_size", 12); // wins over the 10 tokens
  w.add_tensor("output.weight", {64, 12}, ggml_type::f32, f32_bytes(768));
  auto c = config_of(dir, w);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->arch, architecture::qwen2);
  EXPECT_EQ(c->num_key_value_heads, 4);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->rope_theta, 10000.0);
  EXPECT_EQ(c->max_position_embeddings, 32768);
  EXPECT_EQ(c->vocab_size, 12);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(c->bos_token_id, std::nullopt);
  EXPECT_TRUE(c->has_qkv_bias());
}

TEST(gguf_config, qwen3_key_length_and_linear_rope) {
  temp_dir dir;
  gguf_writer w = llama("qwen3");
  w.add("qwen3.attention.key_length", gguf_encoded::i32(32)); // any integer width
  w.add_u32("qwen3.attention.value_length", 32);
  w.add_string("qwen3.rope.scaling.type", "linear");
  w.add("qwen3.rope.scaling.factor", gguf_encoded::f64(2.0));
  auto c = config_of(dir, w);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->arch, architecture::qwen3);
  EXPECT_EQ(c->head_dim, 32); // not 64 / 4
  EXPECT_EQ(c->q_size(), 128);
  EXPECT_EQ(c->rope_scaling.type, rope_scaling::kind::linear);
  EXPECT_EQ(c->rope_scaling.factor, 2.0);
  EXPECT_TRUE(c->has_qk_norm());
}

TEST(gguf_config, old_scale_linear_key_and_none) {
  temp_dir dir;
  gguf_writer old = llama();
  old.add_f32("llama.rope.scale_linear", 4.0f);
  auto c = config_of(dir, old);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->rope_scaling.type, rope_scaling::kind::linear);
  EXPECT_EQ(c->rope_scaling.factor, 4.0);
  gguf_writer none = llama();
  none.add_string("llama.rope.scaling.type", "none");
  auto n = config_of(dir, none);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->rope_scaling.type, rope_scaling::kind::none);
}

TEST(gguf_config, refuses_other_architectures_and_missing_keys) {
  temp_dir dir;
  gguf_writer gemma = llama("gemma2");
  EXPECT_THAT(config_error(dir, gemma),
              AllOf(HasSubstr("key 'general.architecture'"), HasSubstr("'gemma2'")));
  EXPECT_THAT(config_error(dir, llama("llama", {"general.architecture"})),
              HasSubstr("key 'general.architecture': missing"));
  for (auto [skip, key] : {std::pair{"embedding_length", "llama.embedding_length"},
                           {"block_count", "llama.block_count"},
                           {"feed_forward_length", "llama.feed_forward_length"},
                           {"head_count", "llama.attention.head_count"},
                           {"eps", "llama.attention.layer_norm_rms_epsilon"},
                           {"tokens", "tokenizer.ggml.tokens"}})
    EXPECT_THAT(config_error(dir, llama("llama", {skip})),
                HasSubstr("key '" + std::string(key) + "': missing"));
}

TEST(gguf_config, refuses_inconsistent_values) {
  temp_dir dir;
  struct refusal {
    std::function<void(gguf_writer&)> edit;
    std::string key, what;
  };
  const refusal cases[] = {
    {[](gguf_writer& w) { w.add_string("llama.rope.scaling.type", "yarn"); },
     "llama.rope.scaling.type", "unsupported rope scaling 'yarn'"},
    {[](gguf_writer& w) { w.add_string("llama.rope.scaling.type", "linear"); },
     "llama.rope.scaling.factor", "missing"},
    {[](gguf_writer& w) { w.add_u32("llama.attention.value_length", 8); },
     "llama.attention.value_length", "differs from the head size 16"},
    {[](gguf_writer& w) { w.add_u32("llama.rope.dimension_count", 8); },
     "llama.rope.dimension_count", "differs from the head size 16"},
    {[](gguf_writer& w) { w.add_u32("llama.attention.key_length", 15); },
     "llama.attention.key_length", "must be even"},
    {[](gguf_writer& w) { w.add_u32("tokenizer.ggml.eot_token_id", 10); },
     "tokenizer.ggml.eot_token_id", "token id 10 outside [0, vocab_size 10)"},
    {[](gguf_writer& w) { w.add_u32("llama.vocab_size", 0); }, "llama.vocab_size",
     "must be positive"},
  };
  for (const auto& r : cases) {
    gguf_writer w = llama();
    r.edit(w);
    EXPECT_THAT(config_error(dir, w), AllOf(HasSubstr("key '" + r.key + "'"), HasSubstr(r.what)));
  }
  gguf_writer kv = llama("llama", {"head_count_kv"});
  kv.add_u32("llama.attention.head_count_kv", 3);
  EXPECT_THAT(config_error(dir, kv), AllOf(HasSubstr("key 'llama.attention.head_count_kv'"),
                                           HasSubstr("3 does not divide head_count 4")));
  gguf_writer text = llama("llama", {"block_count"});
  text.add_string("llama.block_count", "2");
  EXPECT_THAT(config_error(dir, text),
              HasSubstr("key 'llama.block_count': expected an integer, found string"));
  const std::pair<std::string, float> numbers[] = {
    {"eps", -1.0f},
    {"eps", std::numeric_limits<float>::quiet_NaN()},
    {"freq_base", std::numeric_limits<float>::infinity()},
    {"freq_base", 0.0f},
  };
  for (const auto& [kept, value] : numbers) {
    gguf_writer w = llama("llama", {kept});
    const std::string key = kept == "eps" ? "llama.attention.layer_norm_rms_epsilon"
                                          : "llama.rope.freq_base";
    w.add_f32(key, value);
    EXPECT_THAT(config_error(dir, w),
                HasSubstr("key '" + key + "': must be a positive number within fp32's range"))
      << value;
  }
  gguf_writer inf_scale = llama();
  inf_scale.add_string("llama.rope.scaling.type", "linear");
  inf_scale.add_f32("llama.rope.scaling.factor", std::numeric_limits<float>::infinity());
  EXPECT_THAT(config_error(dir, inf_scale),
              HasSubstr("key 'llama.rope.scaling.factor': must be a positive number within"));
  // float64 values past fp32's range either way.
  for (const double value : {1e300, 1e-300}) {
    gguf_writer w = llama("llama", {"eps"});
    w.add("llama.attention.layer_norm_rms_epsilon", gguf_encoded::f64(value));
    EXPECT_THAT(config_error(dir, w), HasSubstr("layer_norm_rms_epsilon': must be a positive"))
      << value;
  }
  // 2^31 does not fit the int32 sizes and ids downstream.
  gguf_writer wide = llama("llama", {"context_length"});
  wide.add_u32("llama.context_length", 1u << 31);
  EXPECT_THAT(config_error(dir, wide),
              HasSubstr("key 'llama.context_length': must be positive and below 2^31 (got "
                        "2147483648)"));
}

TEST(gguf_config, refuses_an_embedding_that_disagrees) {
  temp_dir dir;
  gguf_writer embd = llama();
  embd.add_tensor("token_embd.weight", {64, 11}, ggml_type::f32, f32_bytes(704));
  EXPECT_THAT(config_error(dir, embd),
              AllOf(HasSubstr("tensor 'token_embd.weight'"), HasSubstr("expected dims {64, 10}")));
}

std::vector<std::byte> floats(const std::vector<float>& v) {
  const auto b = std::as_bytes(std::span(v));
  return {b.begin(), b.end()};
}

TEST(gguf_config, rope_freqs_divides_each_frequency) {
  // Llama 3.1's files: no rope.scaling keys, the llama3 divisors in a tensor
  // of head_dim / 2 = 8 fp32 values.
  temp_dir dir;
  const std::vector<float> divisors = {1, 1, 1.5f, 2.25f, 4, 8, 8, 8};
  gguf_writer w = llama();
  w.add_tensor("rope_freqs.weight", {8}, ggml_type::f32, floats(divisors));
  auto c = config_of(dir, w);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->rope_scaling.type, rope_scaling::kind::none);
  EXPECT_EQ(c->rope_scaling.frequency_divisors,
            std::vector<double>(divisors.begin(), divisors.end()));
  auto plain = config_of(dir, llama());
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->rope_scaling.frequency_divisors.empty());
}

TEST(gguf_config, refuses_rope_freqs_of_another_size_type_or_value) {
  temp_dir dir;
  gguf_writer size = llama();
  size.add_tensor("rope_freqs.weight", {16}, ggml_type::f32, f32_bytes(16));
  EXPECT_THAT(config_error(dir, size),
              AllOf(HasSubstr("tensor 'rope_freqs.weight'"), HasSubstr("expected dims {8}"),
                    HasSubstr("head size 16")));
  gguf_writer type = llama();
  type.add_tensor("rope_freqs.weight", {8}, ggml_type::f16, std::vector<std::byte>(16));
  EXPECT_THAT(config_error(dir, type),
              AllOf(HasSubstr("tensor 'rope_freqs.weight'"), HasSubstr("type F16 (expected F32)")));
  for (float bad : {0.0f, -2.0f, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    gguf_writer value = llama();
    value.add_tensor("rope_freqs.weight", {8}, ggml_type::f32,
                     floats({1, 1, 1, bad, 1, 1, 1, 1}));
    EXPECT_THAT(config_error(dir, value),
                AllOf(HasSubstr("tensor 'rope_freqs.weight'"), HasSubstr("value 3 is"),
                      HasSubstr("expected a positive divisor")))
      << bad;
  }
}

} // namespace
} // namespace kvactor::model
