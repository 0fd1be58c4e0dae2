#include "model/grammar/token_vocabulary.hpp"

#include <algorithm>

namespace kvactor::model {

token_vocabulary::token_vocabulary(std::vector<std::string> bytes, std::vector<token_id> end_tokens,
                                   size_t vocab_size)
  : bytes_(std::move(bytes)),
    end_tokens_(std::move(end_tokens)),
    vocab_size_(std::max(vocab_size, bytes_.size())) {
  std::ranges::sort(end_tokens_);
  for (size_t id = 0; id < bytes_.size(); ++id)
    if (!bytes_[id].empty() && !is_end(static_cast<token_id>(id)))
      sorted_.push_back(static_cast<token_id>(id));
  std::ranges::sort(sorted_, [&](token_id a, token_id b) {
    return bytes_[size_t(a)] < bytes_[size_t(b)] ||
           (bytes_[size_t(a)] == bytes_[size_t(b)] && a < b);
  });
  lcp_.resize(sorted_.size(), 0);
  for (size_t i = 1; i < sorted_.size(); ++i) {
    const std::string& a = bytes_[size_t(sorted_[i - 1])];
    const std::string& b = bytes_[size_t(sorted_[i])];
    const auto diff = std::ranges::mismatch(a, b);
    lcp_[i] = static_cast<uint32_t>(diff.in1 - a.begin());
  }
  const size_t n = sorted_.size();
  for (size_t span = 1; span < n; span *= 2) {
    std::vector<uint8_t>& level = min_lcp_.emplace_back(n - span, 0);
    for (size_t k = 0; k + span < n; ++k) {
      if (span == 1) {
        level[k] = static_cast<uint8_t>(std::min<uint32_t>(lcp_[k + 1], 255));
        continue;
      }
      const std::vector<uint8_t>& half = min_lcp_[min_lcp_.size() - 2];
      level[k] = std::min(half[k], half[k + span / 2]);
    }
  }
}

size_t token_vocabulary::prefix_end(size_t k, size_t d) const {
  // NOTE: shared prefixes are capped at 255 here; a prefix that long is
  // followed position by position.
  if (d > 255) {
    while (k + 1 < lcp_.size() && lcp_[k + 1] >= d) ++k;
    return k + 1;
  }
  for (size_t i = min_lcp_.size(); i-- > 0;) // every position in (k, ...] begins so
    if (k < min_lcp_[i].size() && min_lcp_[i][k] >= d) k += size_t{1} << i;
  return k + 1;
}

bool token_vocabulary::is_end(token_id id) const {
  return std::ranges::binary_search(end_tokens_, id);
}

std::shared_ptr<const token_vocabulary>
vocabulary_of(const tokenizer& tok, std::vector<token_id> end_tokens, size_t vocab_size) {
  std::vector<std::string> bytes(tok.vocab_size());
  for (size_t id = 0; id < bytes.size(); ++id)
    if (!tok.is_special(static_cast<token_id>(id)))
      bytes[id] = tok.token_bytes(static_cast<token_id>(id));
  return std::make_shared<const token_vocabulary>(std::move(bytes), std::move(end_tokens),
                                                  vocab_size);
}

} // namespace kvactor::model
