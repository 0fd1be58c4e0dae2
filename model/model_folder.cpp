#include "model/model_folder.hpp"

#include <memory>
#include <optional>

#include "model/gguf/gguf_config.hpp"
#include "model/gguf/gguf_file.hpp"
#include "model/gguf/gguf_tokenizer.hpp"

namespace kvactor::model {
namespace {

status check_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return error_in(dir.string(), "model folder not found");
  return {};
}

result<std::shared_ptr<const gguf_file>> open_gguf(const std::filesystem::path& path) {
  auto f = gguf_file::open(path);
  if (!f) return f.error();
  return std::make_shared<const gguf_file>(std::move(*f));
}

// NOTE: the embedding may have more rows than the tokenizer has ids (Qwen
// pads to a multiple of 128), never fewer.
// `vocab`: where the model's vocab_size comes from.
status check_vocab(const tokenizer& tok, const model_config& config, const std::string& source,
                   std::string_view vocab) {
  if (tok.vocab_size() > static_cast<std::size_t>(config.vocab_size))
    return error_in(source, "has ids up to " + std::to_string(tok.vocab_size() - 1) + " but " +
                                std::string(vocab) + " is " + std::to_string(config.vocab_size));
  return {};
}

result<loaded_model> load_gguf_model(const std::filesystem::path& path, dtype matrix_dtype) {
  auto file = open_gguf(path);
  if (!file) return file.error();
  auto config = gguf_model_config(**file);
  if (!config) return config.error();
  auto tok = gguf_tokenizer(**file);
  if (!tok) return tok.error();
  if (auto ok = check_vocab(*tok, *config, path.string(), "the model's vocab_size"); !ok)
    return ok.error();
  auto weights = model_weights::load_gguf(*config, std::move(*file), matrix_dtype);
  if (!weights) return weights.error();
  return loaded_model{std::move(*config), std::move(*tok), std::move(*weights)};
}

} // namespace

bool is_gguf_file(const std::filesystem::path& path) { return path.extension() == ".gguf"; }

result<loaded_model> load_model_folder(const std::filesystem::path& dir, dtype matrix_dtype) {
  if (is_gguf_file(dir)) return load_gguf_model(dir, matrix_dtype);
  if (auto ok = check_folder(dir); !ok) return ok.error();
  auto config = load_config(dir / "config.json");
  if (!config) return config.error();
  auto tok = tokenizer::load(dir / "tokenizer.json");
  if (!tok) return tok.error();
  if (auto ok = check_vocab(*tok, *config, (dir / "tokenizer.json").string(),
                            "config.json vocab_size");
      !ok)
    return ok.error();
  auto files = safetensors_set::open_folder(dir);
  if (!files) return files.error();
  auto weights = model_weights::load(*config, std::move(*files), matrix_dtype);
  if (!weights) return weights.error();
  return loaded_model{std::move(*config), std::move(*tok), std::move(*weights)};
}

result<dtype> checkpoint_matrix_dtype(const std::filesystem::path& dir) {
  if (is_gguf_file(dir)) {
    auto file = open_gguf(dir);
    if (!file) return file.error();
    if (auto config = gguf_model_config(**file); !config) return config.error();
    const gguf_tensor_info* embedding = (*file)->find("token_embd.weight");
    return embedding != nullptr && embedding->type == ggml_type::bf16 ? dtype::bf16 : dtype::f32;
  }
  // NOTE: the folder and config.json first, so that a bad folder gives the
  // error load_model_folder would give (the runtime asks this first).
  if (auto ok = check_folder(dir); !ok) return ok.error();
  if (auto config = load_config(dir / "config.json"); !config) return config.error();
  auto files = safetensors_set::open_folder(dir);
  if (!files) return files.error();
  auto embedding = files->get("model.embed_tokens.weight");
  if (!embedding) return embedding.error();
  return embedding->type;
}

result<model_config> load_model_config(const std::filesystem::path& path) {
  if (!is_gguf_file(path)) return load_config(path / "config.json");
  auto file = open_gguf(path);
  if (!file) return file.error();
  return gguf_model_config(**file);
}

result<tokenizer> load_model_tokenizer(const std::filesystem::path& path) {
  if (!is_gguf_file(path)) return tokenizer::load(path / "tokenizer.json");
  auto file = open_gguf(path);
  if (!file) return file.error();
  return gguf_tokenizer(**file);
}

result<chat_template> load_model_chat_template(const std::filesystem::path& path,
                                               const std::filesystem::path& text_file) {
  if (!is_gguf_file(path)) return chat_template::load(path, text_file);
  auto file = open_gguf(path);
  if (!file) return file.error();
  std::optional<std::string> text;
  if (text_file.empty()) {
    auto own = gguf_chat_template(**file);
    if (!own) return own.error();
    if (!*own) return chat_template::plain();
    text = std::move(*own);
  }
  // NOTE: the special tokens a template reads by name, from the ids the
  // file names.
  std::map<std::string, std::string> special;
  auto tokens = (*file)->string_array("tokenizer.ggml.tokens");
  if (!tokens) return tokens.error();
  for (const auto& [key, name] : {std::pair{"tokenizer.ggml.bos_token_id", "bos_token"},
                                  std::pair{"tokenizer.ggml.eos_token_id", "eos_token"}})
    if (auto id = (*file)->uint(key); id && *id < tokens->size()) special[name] = (*tokens)[*id];
  if (!text) return chat_template::from_file(text_file, std::move(special));
  auto t = chat_template::from_text(*text, std::move(special));
  if (!t) return error_in(path.string(), t.error().message);
  return t;
}

} // namespace kvactor::model
