#pragma once
// The pre-tokenizer split of byte-level BPE tokenizers, as a hand-written
// scanner (std::regex has no \p{L}). Each pattern is a regex alternation
// tried in order at the current position; the scanner reproduces its
// leftmost-first matches, including the backtracking of `\s+(?!\S)`.
//
//   gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  as llama3 but \p{N} (one digit per piece) instead of \p{N}{1,3}
//
// Also the Digits pre-tokenizer (SmolLM, some GPT-2 derivatives): every \p{N}
// character on its own (individual_digits) or each run of them (digit_runs),
// the text between as pieces.
//
// Invalid UTF-8 bytes count as one character of class "other".

#include <optional>
#include <string_view>
#include <vector>

namespace kvactor::model {

enum class split_pattern { gpt2, llama3, qwen2, individual_digits, digit_runs };

// Recognises the regex string of a tokenizer.json Split pre-tokenizer.
std::optional<split_pattern> recognise_split_pattern(std::string_view regex);

// The regex text of a pattern, as tokenizer.json spells it ("" for Digits).
std::string_view split_pattern_regex(split_pattern p);

// Splits `text` into consecutive pieces that cover it exactly (the Split
// pre-tokenizer with behavior "Isolated").
std::vector<std::string_view> pre_split(std::string_view text, split_pattern p);

} // namespace kvactor::model
