#pragma once
// token_vocabulary: a model's tokens as the byte strings a grammar reads,
// sorted, so that a mask walks them as a trie: each token starts from the
// state its longest shared prefix with the one before reached, and a prefix
// the grammar refuses skips every token that begins with it.
//
//   sorted   lcp
//   "a"       0
//   "ab"      1   <- starts from the state after "a"
//   "abc"     2
//   "b"       0

#include "model/token_id.hpp"
#include "model/tokenizer/tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvactor::model {

class token_vocabulary {
public:
  // bytes[id]: what token `id` adds to the text; empty for a token that no
  // grammar may produce (special and control tokens, unused ids).
  // `end_tokens`: what ends a sequence (allowed where the grammar is
  // complete). `vocab_size`: the logits' row length (>= bytes.size()).
  token_vocabulary(std::vector<std::string> bytes, std::vector<token_id> end_tokens,
                   size_t vocab_size);

  size_t vocab_size() const { return vocab_size_; }
  // Ids [0, num_ids()) have bytes (maybe empty); the rest of the vocabulary none.
  size_t num_ids() const { return bytes_.size(); }
  const std::string& bytes(token_id id) const { return bytes_[size_t(id)]; }
  const std::vector<token_id>& end_tokens() const { return end_tokens_; }
  bool is_end(token_id id) const;
  // The grammar's tokens in byte order, and each one's common prefix length
  // with the one before (0 for the first).
  const std::vector<token_id>& sorted() const { return sorted_; }
  const std::vector<uint32_t>& shared_prefix() const { return lcp_; }
  // The first position after k whose token does not begin with the first d
  // bytes of k's (d <= their length): where a refused prefix's tokens end.
  // O(log n).
  size_t prefix_end(size_t k, size_t d) const;

private:
  std::vector<std::string> bytes_;
  std::vector<token_id> end_tokens_;
  size_t vocab_size_;
  std::vector<token_id> sorted_;
  std::vector<uint32_t> lcp_;
  // min_lcp_[i][k]: the least shared prefix (at most 255) of positions
  // k + 1 .. k + 2^i.
  std::vector<std::vector<uint8_t>> min_lcp_;
};

// A tokenizer's tokens as grammars read them (special tokens none);
// `end_tokens` end a sequence where the grammar may end.
std::shared_ptr<const token_vocabulary>
vocabulary_of(const tokenizer& tok, std::vector<token_id> end_tokens, size_t vocab_size);

} // namespace kvactor::model
