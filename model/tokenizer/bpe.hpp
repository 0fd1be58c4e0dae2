#pragma once
// bpe_model: byte-level BPE over a vocabulary of symbol strings and a ranked
// list of merges. Encodes one pre-tokenized piece at a time.

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

class bpe_model {
public:
  // `source` names the tokenizer.json in errors. Merges are in rank order;
  // both parts and their concatenation must be in the vocabulary. Every byte
  // needs its symbol in the vocabulary unless there is an `unk_token`.
  static result<bpe_model> build(const std::vector<std::pair<std::string, token_id>>& vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 const std::optional<std::string>& unk_token, bool ignore_merges,
                                 std::string_view source);

  // Appends the ids of one piece of raw bytes.
  void encode_piece(std::string_view bytes, std::vector<token_id>& out) const;

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

  std::unordered_map<std::string, token_id> vocab_;
  std::unordered_map<uint64_t, merge> merges_;
  std::array<token_id, 256> byte_ids_{}; // -1 where the vocabulary lacks the byte
  std::optional<token_id> unk_id_;
  bool ignore_merges_ = false;
};

} // namespace kvactor::model
