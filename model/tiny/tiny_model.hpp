#pragma once
// The tiny model that kvactor-make-tiny writes: a complete Hugging Face style
// folder (config.json, model.safetensors, tokenizer.json) with deterministic
// seeded weights, so tests and demos run the real loading code.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/dtype.hpp"
#include "base/result.hpp"

namespace kvactor::model::tiny {

struct tiny_options {
  architecture arch = architecture::llama;
  int64_t hidden_size = 512;
  int64_t num_layers = 8;
  int64_t num_heads = 8;
  int64_t num_kv_heads = 4;
  int64_t head_dim = 64;
  int64_t intermediate_size = 1536;
  int64_t vocab_size = 4096;
  int64_t max_context = 4096;
  dtype on_disk = dtype::bf16;
  bool tie_embeddings = false;
  uint64_t seed = 0;
  double rope_theta = 10000.0;
  // none, linear (its factor) or llama3 (factor, low and high frequency
  // factors, the original context); written as config.json's rope_scaling.
  struct rope_scaling rope_scaling;
  int64_t num_shards = 1; // > 1: model-0000i-of-0000n.safetensors + index json
};

// Checks that the options describe a model the loader accepts.
status validate(const tiny_options& o);

// config.json text for `o`, as transformers writes it.
std::string config_json(const tiny_options& o);

// generation_config.json and tokenizer_config.json, which transformers
// reads beside tokenizer.json (kvactor does not need them).
std::string generation_config_json(const tiny_options& o);
std::string tokenizer_config_json(const tiny_options& o);

// Name and shape of every weight tensor, in file order.
struct tensor_spec {
  std::string name;
  std::vector<int64_t> shape;
  bool is_norm = false;
  bool is_bias = false; // Qwen2's q, k and v biases (fp32 in memory, as norms)
};
std::vector<tensor_spec> tensor_specs(const tiny_options& o);

// The generator's fp32 values for one tensor (before rounding to the disk
// dtype): normal(0, 0.02) for matrices and biases, 1 + normal(0, 0.05) for
// norm weights, from a PRNG seeded by (seed, tensor name).
std::vector<float> tensor_values(const tiny_options& o, const tensor_spec& spec);

// Writes model.safetensors (one file holding every tensor of tensor_specs).
status write_weights(const std::filesystem::path& file, const tiny_options& o);

// Writes o.num_shards files model-0000i-of-0000n.safetensors of about equal
// size, tensors in order, and model.safetensors.index.json, as
// transformers' save_pretrained shards a checkpoint.
status write_sharded_weights(const std::filesystem::path& dir, const tiny_options& o);

// Special tokens of the tiny tokenizer, at the top of the vocabulary.
inline constexpr const char* bos_token = "<|begin_of_text|>";
inline constexpr const char* eos_token = "<|endoftext|>";
inline constexpr const char* special_tokens[] = {bos_token, eos_token, "<|im_start|>",
                                                 "<|im_end|>"};
inline constexpr int64_t num_special_tokens = 4;
// Special token i has id vocab_size - num_special_tokens + i.
inline int64_t bos_id(const tiny_options& o) { return o.vocab_size - num_special_tokens; }
inline int64_t eos_id(const tiny_options& o) { return o.vocab_size - num_special_tokens + 1; }

// Writes config.json, generation_config.json, the weights (sharded when
// o.num_shards > 1), tokenizer.json and tokenizer_config.json into `dir`
// (created when missing).
status write_model(const std::filesystem::path& dir, const tiny_options& o);

} // namespace kvactor::model::tiny
