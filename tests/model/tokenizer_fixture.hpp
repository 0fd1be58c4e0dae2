#pragma once
// A hand-built byte-level BPE vocabulary for tokenizer tests: the 256 byte
// symbols with id = byte value, nine merges spelling "hello" and " world",
// and one special token.

#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer/byte_level.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"
#include "model/tokenizer/unicode.hpp"

namespace kvactor::model::test_support {

// Ids of the merged tokens, in merge order.
inline constexpr token_id id_he = 256, id_ll = 257, id_hell = 258, id_hello = 259, id_sp_w = 260,
                          id_or = 261, id_sp_wor = 262, id_ld = 263, id_sp_world = 264,
                          id_eot = 265;

inline std::string symbol(unsigned char b) {
  std::string s;
  append_utf8(s, byte_to_symbol(b));
  return s;
}

inline tokenizer_spec hand_built_spec() {
  tokenizer_spec spec;
  for (int b = 0; b < 256; ++b) spec.vocab.emplace_back(symbol(static_cast<unsigned char>(b)), b);
  const std::string sp = symbol(' '); // "Ġ"
  spec.merges = {{"h", "e"},   {"l", "l"},    {"he", "ll"},       {"hell", "o"}, {sp, "w"},
                 {"o", "r"},   {sp + "w", "or"}, {"l", "d"},        {sp + "wor", "ld"}};
  token_id next = 256;
  for (const auto& [a, b] : spec.merges) spec.vocab.emplace_back(a + b, next++);
  spec.added_tokens.push_back({id_eot, "<|endoftext|>", true, false, false});
  spec.splits = {split_pattern::llama3};
  return spec;
}

} // namespace kvactor::model::test_support
