#pragma once
// tokenizer: BPE from a Hugging Face tokenizer.json, byte-level (GPT-2,
// Llama 3, Qwen2/Qwen3) or SentencePiece-style (Llama 2, Mistral), run as
// the tokenizers library runs it:
//
//   text ──► split on added/special tokens (matched first, never split)
//        ──► per stretch between them: normalizer (normalizer.hpp)
//        ──► pre-tokenizer: Metaspace (metaspace.hpp), splits (pretokenizer.hpp)
//        ──► BPE per piece (bpe.hpp) ──► ids
//        ──► post-processor's special tokens around them, if asked (Llama's BOS)
//
// and back: each token's string through the decoder (decoder.hpp).

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
  static result<tokenizer> build(tokenizer_spec spec, std::string_view source);

  // `add_special_tokens`: the post-processor's tokens around the text (a
  // text prompt wants them; a rendered chat template wrote its own).
  std::vector<token_id> encode(std::string_view text, bool add_special_tokens = false) const;

  // The text the ids stand for, as a text of its own (Llama 2's first '▁'
  // gives no space). Invalid UTF-8 comes out as is (a model can emit a lone
  // piece of a character); ids without a token decode to "".
  std::string decode(std::span<const token_id> ids, bool skip_special = false) const;

  // The bytes one token adds after others (an added token: its content);
  // a generated stream is these, concatenated.
  std::string_view token_bytes(token_id id) const;
  bool is_special(token_id id) const;
  // A token by its vocabulary string (byte-level symbols, e.g. "Ġthe") or
  // by the content of an added token ("<|endoftext|>").
  std::optional<token_id> find(std::string_view token) const;

  // The post-processor's tokens before and after a text.
  const std::vector<token_id>& prefix_ids() const { return spec_.prefix_ids; }
  const std::vector<token_id>& suffix_ids() const { return spec_.suffix_ids; }

  // Largest id + 1 (the model's vocab_size may be larger: padding rows).
  std::size_t vocab_size() const { return bytes_.size(); }
  std::size_t num_merges() const { return bpe_.num_merges(); }

private:
  tokenizer(bpe_model bpe, token_decoder decoder)
    : bpe_(std::move(bpe)), decoder_(std::move(decoder)) {}
  // One stretch of text between added tokens; `at_text_start`: it begins the text.
  void encode_segment(std::string_view text, bool at_text_start,
                      std::vector<token_id>& out) const;

  bpe_model bpe_;
  token_decoder decoder_;
  tokenizer_spec spec_;              // normalizer, splits, added and post-processor tokens
  std::vector<std::string> bytes_;   // id -> its text after other tokens
  std::vector<std::string> first_bytes_; // id -> its text first in a text (Metaspace), or empty
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
