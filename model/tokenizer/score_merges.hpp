#pragma once
// The ranked merges of a SentencePiece BPE vocabulary, which stores a score
// per piece instead of merges: every split of a piece into two pieces that are
// both in the vocabulary is a merge, ranked by the merged piece's score,
// highest first. This is how Hugging Face's converter writes the merges of
// Llama 2's and Mistral's tokenizer.json, so the same pieces and scores
// tokenize alike on both paths.
//
//   pieces  "▁"  "t"  "h"  "e"  "▁t"  "he"  "▁the"
//   scores   0    0    0    0   -1    -2    -3
//   merges  (▁ t) (h e) (▁t he)        ("▁" "the": "the" is no piece)
//
// NOTE: ties keep the converter's order (a stable sort of candidates listed
// piece by piece in id order, each piece's splits by the ids of their left,
// then right parts): equal scores rank by the merged piece's id, then the
// left part's id, then the right part's. Splits fall between UTF-8
// characters (an invalid byte counts as one character).

#include <string>
#include <utility>
#include <vector>

namespace kvactor::model {

// `pieces[id]` and `scores[id]` for every id; pieces are distinct and scores
// are not NaN (the caller checks both).
std::vector<std::pair<std::string, std::string>> merges_from_scores(
  const std::vector<std::string>& pieces, const std::vector<float>& scores);

} // namespace kvactor::model
