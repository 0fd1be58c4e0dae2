#include "model/model_folder.hpp"

namespace kvactor::model {

result<loaded_model> load_model_folder(const std::filesystem::path& dir, dtype matrix_dtype) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(dir.string(), "model folder not found");
  auto config = load_config(dir / "config.json");
  if (!config) return config.error();
  auto tok = tokenizer::load(dir / "tokenizer.json");
  if (!tok) return tok.error();
  // NOTE: the embedding may have more rows than the tokenizer has ids (Qwen
  // pads to a multiple of 128), never fewer.
  if (tok->vocab_size() > static_cast<std::size_t>(config->vocab_size))
    return make_error((dir / "tokenizer.json").string(),
                      "has ids up to " + std::to_string(tok->vocab_size() - 1) +
                        " but config.json vocab_size is " + std::to_string(config->vocab_size));
  auto files = safetensors_set::open_folder(dir);
  if (!files) return files.error();
  auto weights = model_weights::load(*config, std::move(*files), matrix_dtype);
  if (!weights) return weights.error();
  return loaded_model{std::move(*config), std::move(*tok), std::move(*weights)};
}

result<dtype> checkpoint_matrix_dtype(const std::filesystem::path& dir) {
  // NOTE: the folder and config.json first, so that a bad folder gives the
  // error load_model_folder would give (the runtime asks this first).
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(dir.string(), "model folder not found");
  if (auto config = load_config(dir / "config.json"); !config) return config.error();
  auto files = safetensors_set::open_folder(dir);
  if (!files) return files.error();
  auto embedding = files->get("model.embed_tokens.weight");
  if (!embedding) return embedding.error();
  return embedding->type;
}

} // namespace kvactor::model
