#pragma once
// model_config from a GGUF file's metadata: the keys llama.cpp's converter
// writes for the llama, qwen2 and qwen3 architectures, validated as
// config.json is (model/config.cpp), with the same defaults.
//
//   general.architecture            "llama" | "qwen2" | "qwen3"  -> arch
//   <arch>.embedding_length         hidden_size
//   <arch>.block_count              num_hidden_layers
//   <arch>.feed_forward_length      intermediate_size
//   <arch>.attention.head_count     num_attention_heads
//   <arch>.attention.head_count_kv  num_key_value_heads (default: head_count)
//   <arch>.attention.key_length     head_dim (default: embedding_length / head_count)
//   <arch>.attention.layer_norm_rms_epsilon   rms_norm_eps
//   <arch>.rope.freq_base           rope_theta (default 10000)
//   <arch>.rope.scaling.type/factor rope_scaling (none or linear)
//   rope_freqs.weight tensor         rope_scaling.frequency_divisors (Llama 3.1's
//                                   llama3 scaling as the converter stores it)
//   <arch>.context_length           max_position_embeddings
//   <arch>.vocab_size, else the length of tokenizer.ggml.tokens   vocab_size
//   tokenizer.ggml.bos_token_id     bos_token_id
//   tokenizer.ggml.eos/eot/eom_token_id   eos_token_ids
//   no output.weight tensor         tie_word_embeddings

#include "base/result.hpp"
#include "model/config.hpp"
#include "model/gguf/gguf_file.hpp"

namespace kvactor::model {

// Errors name the file and the key or tensor at fault.
result<model_config> gguf_model_config(const gguf_file& file);

} // namespace kvactor::model
