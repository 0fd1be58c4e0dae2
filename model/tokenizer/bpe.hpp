#pragma once
// bpe_model: BPE over a vocabulary of symbol strings and a ranked list of
// merges. Encodes one pre-tokenized piece at a time. Its first symbols are
//   byte-level  each byte's GPT-2 symbol (GPT-2, Llama 3, Qwen); or
//   characters  each UTF-8 character (SentencePiece-style: Llama 2,
//               Mistral), with a character missing from the vocabulary
//               spelt by its bytes' "<0xAB>" tokens (byte fallback) or the
//               unknown token (consecutive ones fused into one if asked).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "model/token_id.hpp"

namespace kvactor::model {

struct bpe_options {
  std::optional<std::string> unk_token;
  bool ignore_merges = false; // a piece found whole in the vocabulary is one token
  bool byte_level = true;     // first symbols are bytes (else characters)
  bool byte_fallback = false; // characters: a missing one becomes its "<0xAB>" tokens
  bool fuse_unk = false;      // characters: consecutive unknown ones are one token
};

class bpe_model {
public:
  // `source` names the tokenizer.json in errors. Merges are in rank order;
  // both parts and their concatenation must be in the vocabulary. Byte-level:
  // every byte needs its symbol in the vocabulary unless there is an `unk_token`.
  static result<bpe_model> build(const std::vector<std::pair<std::string, token_id>>& vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 const bpe_options& options, std::string_view source);

  // Appends the ids of one piece of text (raw bytes when byte-level).
  void encode_piece(std::string_view text, std::vector<token_id>& out) const;

  std::optional<token_id> find(std::string_view symbols) const;
  std::size_t num_merges() const { return merges_.size(); }

private:
  struct merge {
    uint32_t rank;
    token_id result;
  };
  static uint64_t pair_key(token_id a, token_id b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // The first symbols of a character-mode piece.
  void split_characters(std::string_view text, std::vector<token_id>& ids) const;
  void merge_all(std::vector<token_id>& ids) const;

  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, token_id, string_hash, std::equal_to<>> vocab_;
  std::unordered_map<uint64_t, merge> merges_;
  std::array<token_id, 256> byte_ids_{}; // -1 where the vocabulary lacks the byte('s token)
  std::optional<token_id> unk_id_;
  bpe_options options_;
};

} // namespace kvactor::model
