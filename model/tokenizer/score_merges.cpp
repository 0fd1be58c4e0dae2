#include "model/tokenizer/score_merges.hpp"

#include <algorithm>
#include <cassert>
#include <string_view>
#include <unordered_map>

#include "base/utf8.hpp"
#include "model/token_id.hpp"

namespace kvactor::model {

std::vector<std::pair<std::string, std::string>> merges_from_scores(
  const std::vector<std::string>& pieces, const std::vector<float>& scores) {
  assert(pieces.size() == scores.size());
  std::unordered_map<std::string_view, token_id> ids;
  ids.reserve(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i)
    ids.emplace(pieces[i], static_cast<token_id>(i));

  struct candidate {
    float score;
    token_id merged, left, right;
    std::size_t split; // bytes of the left part
  };
  std::vector<candidate> candidates;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string_view piece = pieces[i];
    std::size_t split = piece.empty() ? 0 : decode_utf8(piece, 0).length;
    for (; split < piece.size(); split += decode_utf8(piece, split).length) {
      const auto left = ids.find(piece.substr(0, split));
      const auto right = ids.find(piece.substr(split));
      if (left == ids.end() || right == ids.end()) continue;
      candidates.push_back(
        {scores[i], static_cast<token_id>(i), left->second, right->second, split});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const candidate& a, const candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.merged != b.merged) return a.merged < b.merged;
    if (a.left != b.left) return a.left < b.left;
    return a.right < b.right;
  });
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(candidates.size());
  for (const auto& c : candidates) {
    const std::string& piece = pieces[static_cast<std::size_t>(c.merged)];
    merges.emplace_back(piece.substr(0, c.split), piece.substr(c.split));
  }
  return merges;
}

} // namespace kvactor::model
