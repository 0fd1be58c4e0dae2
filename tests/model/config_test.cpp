#include "model/config.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;

// Shaped like a real Llama-3.x config.json (values shrunk).
constexpr std::string_view llama3_config = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})";

constexpr std::string_view qwen3_config = R"({
  "architectures": ["Qwen3ForCausalLM"],
  "attention_bias": false,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 1024,
  "intermediate_size": 3072,
  "max_position_embeddings": 40960,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "use_sliding_window": false,
  "vocab_size": 151936
})";

std::string replace(std::string_view text, std::string_view from, std::string_view to) {
  std::string s(text);
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

std::string error_of(std::string_view json) {
  auto r = parse_config(json, "cfg.json");
  EXPECT_FALSE(r.has_value()) << json;
  return r ? std::string() : r.error().message;
}

TEST(config, parses_llama3) {
  auto r = parse_config(llama3_config, "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  const model_config& c = *r;
  EXPECT_EQ(c.arch, architecture::llama);
  EXPECT_EQ(c.hidden_size, 2048);
  EXPECT_EQ(c.num_hidden_layers, 16);
  EXPECT_EQ(c.num_attention_heads, 32);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 64); // hidden / heads
  EXPECT_EQ(c.num_queries_per_kv(), 4);
  EXPECT_EQ(c.intermediate_size, 8192);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  EXPECT_DOUBLE_EQ(c.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.rope_scaling.type, rope_scaling::kind::llama3);
  EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 32.0);
  EXPECT_DOUBLE_EQ(c.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(c.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_FALSE(c.has_qk_norm());
}

TEST(config, parses_qwen3) {
  auto r = parse_config(qwen3_config, "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->arch, architecture::qwen3);
  EXPECT_TRUE(r->has_qk_norm());
  EXPECT_EQ(r->head_dim, 128); // explicit, not hidden / heads (64)
  EXPECT_EQ(r->q_size(), 2048);
  EXPECT_EQ(r->kv_size(), 1024);
  EXPECT_EQ(r->eos_token_ids, std::vector<int64_t>{151645});
  EXPECT_DOUBLE_EQ(r->rope_theta, 1e6); // an integer in the file
  EXPECT_EQ(r->rope_scaling.type, rope_scaling::kind::none);
}

// Qwen2.5-0.5B-Instruct's config.json: its sliding window is off
// (use_sliding_window false), so the served context is the whole 32k.
constexpr std::string_view qwen25_config = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 21,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 32768, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936
})";

TEST(config, parses_qwen2) {
  auto r = parse_config(qwen25_config, "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->arch, architecture::qwen2);
  EXPECT_EQ(architecture_name(r->arch), "qwen2");
  EXPECT_TRUE(r->has_qkv_bias());
  EXPECT_FALSE(r->has_qk_norm());
  EXPECT_EQ(r->head_dim, 64);
  EXPECT_EQ(r->max_position_embeddings, 32768);
  EXPECT_FALSE(r->sliding_window.has_value());
  EXPECT_TRUE(r->tie_word_embeddings);
  EXPECT_THAT(error_of(replace(qwen25_config, R"("use_sliding_window": false)",
                               R"("use_sliding_window": true)")),
              HasSubstr("use_sliding_window"));
  auto by_type = parse_config(replace(qwen25_config, R"("architectures": ["Qwen2ForCausalLM"],)",
                                      ""),
                              "cfg.json");
  ASSERT_TRUE(by_type) << by_type.error().message;
  EXPECT_EQ(by_type->arch, architecture::qwen2);
}

TEST(config, defaults_when_optional_keys_are_absent) {
  auto r = parse_config(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 300})",
                        "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->num_key_value_heads, 4);
  EXPECT_EQ(r->head_dim, 16);
  EXPECT_EQ(r->max_position_embeddings, 2048);
  EXPECT_DOUBLE_EQ(r->rope_theta, 10000.0);
  EXPECT_FALSE(r->tie_word_embeddings);
  EXPECT_FALSE(r->bos_token_id.has_value());
  EXPECT_TRUE(r->eos_token_ids.empty());
}

// Mistral is the Llama layout; within its sliding window attention is full
// attention, so the served context stops at the window.
TEST(config, mistral_serves_up_to_its_sliding_window) {
  const std::string mistral = R"({"architectures": ["MistralForCausalLM"],
      "model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 300,
      "max_position_embeddings": 32768, "sliding_window": 4096})";
  auto r = parse_config(mistral, "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->arch, architecture::llama);
  EXPECT_EQ(r->sliding_window, 4096);
  EXPECT_EQ(r->max_position_embeddings, 4096);
  // v0.2 and later: no window.
  r = parse_config(replace(mistral, R"("sliding_window": 4096)", R"("sliding_window": null)"),
                   "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->sliding_window.has_value());
  EXPECT_EQ(r->max_position_embeddings, 32768);
  // Absent: transformers' default window.
  r = parse_config(replace(mistral, R"(, "sliding_window": 4096)", ""), "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->max_position_embeddings, 4096);
  // A window larger than the context changes nothing.
  r = parse_config(replace(mistral, R"("sliding_window": 4096)", R"("sliding_window": 65536)"),
                   "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->max_position_embeddings, 32768);
  auto bad =
    parse_config(replace(mistral, R"("sliding_window": 4096)", R"("sliding_window": 0)"), "c");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("key 'sliding_window': must be positive or null"));
}

TEST(config, linear_rope_scaling_with_old_type_key) {
  auto r = parse_config(replace(llama3_config, R"("rope_type": "llama3")", R"("type": "linear")"),
                        "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->rope_scaling.type, rope_scaling::kind::linear);
  EXPECT_DOUBLE_EQ(r->rope_scaling.factor, 32.0);
}

TEST(config, architecture_from_architectures_only) {
  auto r = parse_config(replace(qwen3_config, R"("model_type": "qwen3",)", ""), "cfg.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->arch, architecture::qwen3);
}

TEST(config, rejects_unknown_rope_type) {
  const auto msg =
    error_of(replace(llama3_config, R"("rope_type": "llama3")", R"("rope_type": "yarn")"));
  EXPECT_THAT(msg, HasSubstr("cfg.json"));
  EXPECT_THAT(msg, HasSubstr("rope_scaling"));
  EXPECT_THAT(msg, HasSubstr("yarn"));
}

TEST(config, rejects_self_contradicting_shapes) {
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("num_key_value_heads": 8)", R"("num_key_value_heads": 5)")),
    HasSubstr("key 'num_key_value_heads': 5 does not divide num_attention_heads 32"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("num_attention_heads": 32)",
                               R"("num_attention_heads": 24)")),
              HasSubstr("key 'num_attention_heads'"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("hidden_size": 2048)", R"("hidden_size": 0)")),
              HasSubstr("key 'hidden_size': must be positive (got 0)"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("vocab_size": 128256)", R"("vocab_size": -3)")),
              HasSubstr("key 'vocab_size': must be positive"));
  EXPECT_THAT(error_of(replace(qwen3_config, R"("head_dim": 128)", R"("head_dim": 0)")),
              HasSubstr("key 'head_dim'"));
  EXPECT_THAT(
    error_of(replace(qwen3_config, R"("eos_token_id": 151645)", R"("eos_token_id": 999999)")),
    HasSubstr("key 'eos_token_id'"));
}

TEST(config, rejects_missing_required_keys) {
  EXPECT_THAT(error_of(replace(llama3_config, R"("intermediate_size": 8192,)", "")),
              HasSubstr("cfg.json: key 'intermediate_size': missing"));
  EXPECT_THAT(error_of(R"({"hidden_size": 8})"), HasSubstr("key 'model_type': missing"));
}

TEST(config, rejects_wrong_types) {
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("hidden_size": 2048)", R"("hidden_size": "2048")")),
    HasSubstr("key 'hidden_size': expected an integer"));
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("hidden_size": 2048)", R"("hidden_size": 2048.5)")),
    HasSubstr("key 'hidden_size': expected an integer"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("tie_word_embeddings": true)",
                               R"("tie_word_embeddings": 1)")),
              HasSubstr("key 'tie_word_embeddings'"));
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("rope_theta": 500000.0)", R"("rope_theta": "big")")),
    HasSubstr("key 'rope_theta': expected a number"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("eos_token_id": [128001, 128008, 128009])",
                               R"("eos_token_id": "x")")),
              HasSubstr("key 'eos_token_id'"));
}

TEST(config, rejects_norms_and_rope_bases_fp32_cannot_hold) {
  // The forward pass computes with them as floats: past FLT_MAX (3.4028235e38
  // rounds to it; 3.5e38 is infinite) or below the least subnormal (1e-45
  // rounds to it; 7e-46 is 0).
  const auto with_eps = [](std::string_view eps) {
    return replace(llama3_config, R"("rms_norm_eps": 1e-05)",
                   std::string(R"("rms_norm_eps": )") + std::string(eps));
  };
  for (const char* eps : {"3.5e38", "7e-46", "1e300", "1e-300", "0", "-1e-05"})
    EXPECT_THAT(error_of(with_eps(eps)),
                HasSubstr("key 'rms_norm_eps': must be a positive number within fp32's range"))
      << eps;
  for (const char* eps : {"3.4028235e38", "1e-45"}) {
    auto c = parse_config(with_eps(eps), "cfg.json");
    EXPECT_TRUE(c.has_value()) << eps << ": " << c.error().message;
  }
  // The value as given, to nine digits.
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("rope_theta": 500000.0)", R"("rope_theta": 3.402824e38)")),
    HasSubstr("key 'rope_theta': must be a positive number within fp32's range (got "
              "3.402824e+38)"));
  // llama3 scaling divides by its frequency factors.
  EXPECT_THAT(error_of(replace(llama3_config, R"("low_freq_factor": 1.0)",
                               R"("low_freq_factor": 0)")),
              HasSubstr("key 'rope_scaling.low_freq_factor': must be a positive number"));
}

TEST(config, rejects_unsupported_models) {
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("model_type": "llama")", R"("model_type": "gpt2")")),
    HasSubstr("unsupported model type 'gpt2'"));
  EXPECT_THAT(error_of(replace(llama3_config, R"("LlamaForCausalLM")", R"("Qwen3ForCausalLM")")),
              HasSubstr("key 'architectures': disagrees"));
  EXPECT_THAT(
    error_of(replace(llama3_config, R"("attention_bias": false)", R"("attention_bias": true)")),
    HasSubstr("key 'attention_bias'"));
}

TEST(config, rejects_bad_json) {
  EXPECT_THAT(error_of(""), HasSubstr("cfg.json: invalid JSON"));
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("cfg.json: expected a JSON object"));
  EXPECT_THAT(error_of(llama3_config.substr(0, 200)), HasSubstr("cfg.json: invalid JSON"));
  EXPECT_THAT(error_of(std::string(llama3_config) + R"({"a": 1})"), HasSubstr("trailing content"));
}

TEST(config, load_names_the_file) {
  test_support::temp_dir dir;
  auto missing = load_config(dir / "config.json");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr((dir / "config.json").string()));
  EXPECT_THAT(missing.error().message, HasSubstr("not found"));
  test_support::write_file(dir / "config.json", qwen3_config);
  auto ok = load_config(dir / "config.json");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->num_hidden_layers, 28);
}

} // namespace
} // namespace kvactor::model
