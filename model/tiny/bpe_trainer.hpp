#pragma once
// Byte-level BPE training: learns merges from a text, the way GPT-2 style
// vocabularies are made. Used by kvactor-make-tiny; deterministic.

#include <cstddef>
#include <string_view>

#include "model/tokenizer/pretokenizer.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model::tiny {

// A vocabulary of the 256 byte symbols (id = byte value) followed by up to
// `max_new_tokens` merged tokens, most frequent pair first (ties: lowest ids).
// Stops early when no pair occurs twice. Fills spec.vocab, spec.merges and
// spec.splits; added tokens are the caller's.
tokenizer_spec train_bpe(std::string_view text, split_pattern pattern, std::size_t max_new_tokens);

} // namespace kvactor::model::tiny
