#pragma once
// load_model_folder: everything a Hugging Face checkpoint folder holds that
// kvactor serves with — config.json, the safetensors weights (one file or an
// index with shards) and tokenizer.json — loaded and cross-checked.
//
//   auto m = load_model_folder("/models/tiny", dtype::f32);
//   if (!m) { log(m.error().message); return; }
//   m->config.num_hidden_layers; m->weights.layers()[0].q_proj; m->tok.encode("hi");

#include <filesystem>

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

// Loads `dir`; matrices come back in `matrix_dtype` (see model_weights::load).
// Every failure is an error naming the file and the key or tensor at fault.
result<loaded_model> load_model_folder(const std::filesystem::path& dir,
                                       dtype matrix_dtype = dtype::f32);

// The dtype the checkpoint in `dir` stores its matrices in (its embedding's).
result<dtype> checkpoint_matrix_dtype(const std::filesystem::path& dir);

} // namespace kvactor::model
