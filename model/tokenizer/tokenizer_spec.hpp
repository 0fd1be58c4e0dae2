#pragma once
// tokenizer_spec: what a tokenizer.json says, before it is validated and
// indexed by `tokenizer`. The reader fills it; kvactor-make-tiny writes it.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "model/token_id.hpp"
#include "model/tokenizer/pretokenizer.hpp"

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
  std::vector<std::pair<std::string, token_id>> vocab;       // byte-level symbols -> id
  std::vector<std::pair<std::string, std::string>> merges;    // in rank order
  std::vector<added_token> added_tokens;
  std::vector<split_pattern> splits; // applied in order; empty: no split
  bool add_prefix_space = false;     // ByteLevel: prepend ' ' unless present
  bool ignore_merges = false;        // BPE: a piece found whole in vocab is one token
  std::optional<std::string> unk_token;
};

// Reads tokenizer.json text. Supports byte-level BPE (GPT-2, Llama 3,
// Qwen2/3 style); anything else is a clear error naming `source` and the key.
result<tokenizer_spec> parse_tokenizer_json(std::string_view json_text, std::string_view source);

// tokenizer.json text in the format transformers writes.
std::string write_tokenizer_json(const tokenizer_spec& spec);

} // namespace kvactor::model
