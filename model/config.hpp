#pragma once
// model_config: the parts of a Hugging Face config.json that the forward
// pass of the Llama family, Qwen2 and Qwen3 needs, validated.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace kvactor::model {

// Which tensor layout and which extras the forward pass uses.
enum class architecture : uint8_t {
  llama, // LlamaForCausalLM (also Llama 2 and 3), MistralForCausalLM
  qwen2, // Qwen2ForCausalLM (Qwen2, Qwen2.5): Llama layout + biases on q, k and v
  qwen3, // Qwen3ForCausalLM: Llama layout + per-head RMSNorm of q and k
};

std::string_view architecture_name(architecture a);

// rope_scaling of config.json. `none` when the key is absent or null.
struct rope_scaling {
  enum class kind : uint8_t { none, linear, llama3 };
  kind type = kind::none;
  double factor = 1.0;
  // llama3 only:
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;
  // Empty, or one divisor per dimension pair (head_dim / 2 of them),
  // applied after `type`'s scaling: a GGUF file's rope_freqs tensor, how
  // llama.cpp's converter stores Llama 3.1's llama3 scaling.
  std::vector<double> frequency_divisors;
};

struct model_config {
  architecture arch = architecture::llama;
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0; // = num_attention_heads when absent
  int64_t head_dim = 0;            // = hidden_size / num_attention_heads when absent
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0; // the served context: at most sliding_window
  std::optional<int64_t> sliding_window; // Mistral's attention window, when it has one
  double rope_theta = 10000.0;
  struct rope_scaling rope_scaling;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids; // config.json allows an int or a list
  std::string torch_dtype;                 // "bfloat16", ...; empty when absent

  // Qwen3 normalises each head of q and k with its own RMSNorm weight.
  bool has_qk_norm() const { return arch == architecture::qwen3; }
  // Qwen2 adds a bias to each of the q, k and v products.
  bool has_qkv_bias() const { return arch == architecture::qwen2; }
  int64_t q_size() const { return num_attention_heads * head_dim; }
  int64_t kv_size() const { return num_key_value_heads * head_dim; }
  // Query heads that share one KV head (GQA).
  int64_t num_queries_per_kv() const { return num_attention_heads / num_key_value_heads; }
};

// Whether `v` is a positive number that fp32 holds, neither infinite nor
// rounded to 0: what a norm epsilon (the norm adds it as a float), a RoPE
// base and RoPE scaling's factors must be (the frequencies made from them
// are floats).
bool positive_in_float(double v);
// "must be a positive number within fp32's range (got <v>)".
std::string not_positive_in_float(double v);

// Parses and validates config.json text; `source` names it in errors.
result<model_config> parse_config(std::string_view json_text, std::string_view source);

// Reads and parses a config.json file.
result<model_config> load_config(const std::filesystem::path& file);

} // namespace kvactor::model
