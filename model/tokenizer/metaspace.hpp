#pragma once
// The Metaspace pre-tokenizer of SentencePiece-style tokenizers (Llama 2,
// Mistral, TinyLlama): every space becomes the replacement character
// (U+2581 '▁'), one is prepended to the text, and the text is split before
// each replacement character.
//
//   "Hello world"  ->  "▁Hello" "▁world"        "a  b"  ->  "▁a" "▁" "▁b"

#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

struct metaspace {
  // Where the replacement is prepended: before every stretch of text between
  // added tokens, only before the text's start, or nowhere.
  enum class prepend { always, first, never };

  std::string replacement = "\u2581";
  prepend prepend_scheme = prepend::always;
  bool split = true;

  // The pieces of one stretch of text; `at_text_start` says whether it
  // begins the whole text (not just follows an added token).
  std::vector<std::string> pre_tokenize(std::string_view text, bool at_text_start) const;
};

} // namespace kvactor::model
