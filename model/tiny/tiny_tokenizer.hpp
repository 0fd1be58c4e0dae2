#pragma once
// The tiny model's tokenizer: byte-level BPE trained on the embedded corpus,
// with the special tokens at the top of the vocabulary.
//
//   ids [0, 256)                      the 256 byte symbols (id = byte value)
//   ids [256, 256 + merges)           learned tokens
//   ...                               <|reserved_special_token_N|> when the
//                                     corpus runs out of merges
//   ids [vocab - 4, vocab)            <|begin_of_text|> <|endoftext|>
//                                     <|im_start|> <|im_end|>

#include "model/tiny/tiny_model.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model::tiny {

// Exactly o.vocab_size ids. Llama style uses the Llama 3 split pattern,
// Qwen3 style the Qwen2 one.
tokenizer_spec make_tokenizer_spec(const tiny_options& o);

} // namespace kvactor::model::tiny
