#pragma once
// tokenizer_spec: what a tokenizer.json says, before it is validated and
// indexed by `tokenizer`. The reader fills it; kvactor-make-tiny writes it.

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/result.hpp"
#include "model/token_id.hpp"
#include "model/tokenizer/bpe.hpp"
#include "model/tokenizer/decoder.hpp"
#include "model/tokenizer/metaspace.hpp"
#include "model/tokenizer/normalizer.hpp"
#include "model/tokenizer/pretokenizer.hpp"
#include "model/tokenizer/regex_split.hpp"

namespace kvactor::model {

// An entry of "added_tokens": matched in the raw text before anything else
// and never split.
struct added_token {
  token_id id = 0;
  std::string content; // raw text, not byte-level symbols
  bool special = false;
  bool lstrip = false; // absorbs whitespace on its left
  bool rstrip = false; // absorbs whitespace on its right
};

struct tokenizer_spec {
  std::vector<std::pair<std::string, token_id>> vocab;       // symbols -> id
  std::vector<std::pair<std::string, std::string>> merges;    // in rank order
  std::vector<added_token> added_tokens;
  std::vector<normalizer_step> normalizer;
  std::optional<metaspace> metaspace_split; // before `splits`
  // A Split or Digits pre-tokenizer: a pattern scanned by hand, or a regex
  // run by PCRE2.
  using split_step = std::variant<split_pattern, regex_split>;
  std::vector<split_step> splits;           // applied in order; empty: no split
  bool add_prefix_space = false;            // ByteLevel: prepend ' ' unless present
  bpe_options bpe;
  // The post-processor's special tokens around a text (TemplateProcessing's
  // "single"), added when a request asks for special tokens.
  std::vector<token_id> prefix_ids, suffix_ids;
  std::vector<decoder_step> decoder; // empty: ByteLevel
};

// Reads tokenizer.json text: BPE models, byte-level or SentencePiece-style,
// with the normalizers, pre-tokenizers, post-processors and decoders that
// published checkpoints use; anything else is a clear error naming `source`
// and the key.
result<tokenizer_spec> parse_tokenizer_json(std::string_view json_text, std::string_view source);

// tokenizer.json text in the format transformers writes (byte-level BPE).
std::string write_tokenizer_json(const tokenizer_spec& spec);

} // namespace kvactor::model
