#pragma once
// load_model_folder: everything a model holds that kvactor serves with,
// loaded and cross-checked, from either kind of model a user has:
//   - a Hugging Face checkpoint folder: config.json, the safetensors weights
//     (one file or an index with shards), tokenizer.json,
//     tokenizer_config.json (the chat template);
//   - a GGUF file (`*.gguf`, llama.cpp's format): the same from its
//     metadata and tensors (model/gguf/).
//
//   auto m = load_model_folder("/models/tiny", dtype::f32);
//   if (!m) { log(m.error().message); return; }
//   m->config.num_hidden_layers; m->weights.layers()[0].q_proj; m->tok.encode("hi");

#include <filesystem>

#include "model/chat_template.hpp"
#include "model/config.hpp"
#include "base/result.hpp"
#include "model/tokenizer/tokenizer.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

struct loaded_model {
  model_config config;
  tokenizer tok;
  model_weights weights;
};

// Whether `path` names a GGUF file (by its extension) rather than a folder.
bool is_gguf_file(const std::filesystem::path& path);

// Loads the model at `path`; matrices come back in `matrix_dtype` (see
// model_weights::load; a GGUF file's block-quantised matrices stay
// quantised). Every failure is an error naming the file and
// the key or tensor at fault.
result<loaded_model> load_model_folder(const std::filesystem::path& path,
                                       dtype matrix_dtype = dtype::f32);

// The dtype the model at `path` stores its matrices in (its embedding's;
// f32 for a GGUF file's F32, F16 and quantised embeddings).
result<dtype> checkpoint_matrix_dtype(const std::filesystem::path& path);

// One part of the model at `path`, read alone (the HTTP front's tokenizer
// and chat template, the served context).
result<model_config> load_model_config(const std::filesystem::path& path);
result<tokenizer> load_model_tokenizer(const std::filesystem::path& path);
// `text_file`, when given, is the chat template instead of the model's.
result<chat_template> load_model_chat_template(const std::filesystem::path& path,
                                               const std::filesystem::path& text_file = {});

} // namespace kvactor::model
