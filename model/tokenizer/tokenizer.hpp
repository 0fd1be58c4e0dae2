#pragma once
// tokenizer: byte-level BPE from a Hugging Face tokenizer.json (GPT-2,
// Llama 3, Qwen2/Qwen3 style).
//
//   text ──► split on added/special tokens (matched first, never split)
//        ──► pre-tokenizer split (pretokenizer.hpp) ──► BPE per piece ──► ids
//
// encode() adds no BOS: the caller prepends config.bos_token_id when the
// model wants one (the post_processor of tokenizer.json is not applied).

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "model/token_id.hpp"
#include "model/tokenizer/bpe.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model {

class tokenizer {
public:
  static result<tokenizer> load(const std::filesystem::path& file);
  static result<tokenizer> parse(std::string_view json_text, std::string_view source);
  static result<tokenizer> build(const tokenizer_spec& spec, std::string_view source);

  std::vector<token_id> encode(std::string_view text) const;

  // The bytes the ids stand for. Invalid UTF-8 comes out as is (a model
  // can emit a lone piece of a character); ids without a token decode to "".
  std::string decode(std::span<const token_id> ids, bool skip_special = false) const;

  // The raw bytes of one token (the content of an added token).
  std::string_view token_bytes(token_id id) const;
  bool is_special(token_id id) const;
  // A token by its vocabulary string (byte-level symbols, e.g. "Ġthe") or
  // by the content of an added token ("<|endoftext|>").
  std::optional<token_id> find(std::string_view token) const;

  // Largest id + 1 (the model's vocab_size may be larger: padding rows).
  std::size_t vocab_size() const { return bytes_.size(); }
  std::size_t num_merges() const { return bpe_.num_merges(); }

private:
  explicit tokenizer(bpe_model bpe) : bpe_(std::move(bpe)) {}
  void encode_segment(std::string_view text, std::vector<token_id>& out) const;

  bpe_model bpe_;
  tokenizer_spec spec_;              // splits, prefix space, added tokens
  std::vector<std::string> bytes_;   // id -> raw bytes
  std::vector<bool> special_;        // id -> special added token
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Added tokens by content, and per first byte the distinct content lengths
  // (longest first): matching costs one hash look-up per length, however
  // many added tokens there are (Llama 3 reserves 256, a padded tiny model more).
  // NOTE: indices into spec_.added_tokens, not pointers, so copies stay valid.
  std::unordered_map<std::string, std::size_t, string_hash, std::equal_to<>> added_by_content_;
  std::vector<std::vector<std::size_t>> added_lengths_by_first_byte_; // 256 lists
};

} // namespace kvactor::model
