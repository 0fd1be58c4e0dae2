#pragma once
// The tokenizer a GGUF file stores in its metadata (ggml's docs/gguf.md,
// "tokenizer.ggml"), as the tokenizer_spec that the same model's
// tokenizer.json gives, so both tokenize alike:
//
//   tokenizer.ggml.model       "llama": SentencePiece-style BPE (Llama 2,
//                              Mistral): merges from the scores
//                              (score_merges.hpp), byte fallback, Llama 2's
//                              normalizer (Prepend '▁', ' ' -> '▁') and decoder
//                              "gpt2": byte-level BPE (Llama 3, Qwen2)
//   tokenizer.ggml.tokens      the vocabulary; a token's id is its index
//   tokenizer.ggml.token_type  per token: 1 normal, 2 unknown, 3 control,
//                              4 user-defined, 5 unused, 6 byte ("<0x41>")
//   tokenizer.ggml.scores      per token ("llama")
//   tokenizer.ggml.merges      "a b" in rank order ("gpt2")
//   tokenizer.ggml.pre         the split regex ("gpt2"): "llama-bpe" or
//                              "llama3" (Llama 3's), "qwen2", "gpt-2" or "default"
//   tokenizer.ggml.bos_token_id, eos_, unknown_, padding_   ids (optional)
//   tokenizer.ggml.add_bos_token   BOS before a text (default: "llama" yes,
//                                  "gpt2" no); add_eos_token: EOS after (no)
//   tokenizer.ggml.add_space_prefix   "llama": prepend '▁' (default yes)
//
// Unknown and control tokens are special added tokens, user-defined ones
// added tokens that are not special (matched in the raw text first).

#include <optional>
#include <string>

#include "base/result.hpp"
#include "model/gguf/gguf_file.hpp"
#include "model/tokenizer/tokenizer.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"

namespace kvactor::model {

// Errors name the file and the key at fault: an unsupported model or
// pre-tokenizer, a missing array, an array of the wrong length or type, a
// merge naming a token the vocabulary lacks, an id out of range.
result<tokenizer_spec> gguf_tokenizer_spec(const gguf_file& file);
result<tokenizer> gguf_tokenizer(const gguf_file& file);

// tokenizer.chat_template, if the file has one.
result<std::optional<std::string>> gguf_chat_template(const gguf_file& file);

} // namespace kvactor::model
