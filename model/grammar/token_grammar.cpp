#include "model/grammar/token_grammar.hpp"

#include <bit>
#include <limits>

namespace kvactor::model {

size_t token_mask::count() const {
  size_t n = 0;
  for (uint64_t w : bits) n += static_cast<size_t>(std::popcount(w));
  return n;
}

void apply_mask(std::span<float> logits, const token_mask& mask) {
  constexpr float refused = -std::numeric_limits<float>::infinity();
  for (size_t w = 0; w < mask.bits.size(); ++w) {
    uint64_t off = ~mask.bits[w];
    if (off == 0) continue;
    const size_t base = w * 64;
    if (off == ~uint64_t{0} && base + 64 <= logits.size()) {
      std::fill_n(logits.begin() + ptrdiff_t(base), 64, refused);
      continue;
    }
    for (; off != 0; off &= off - 1) {
      const size_t id = base + static_cast<size_t>(std::countr_zero(off));
      if (id < logits.size()) logits[id] = refused;
    }
  }
}

token_grammar::token_grammar(std::shared_ptr<const grammar> g,
                             std::shared_ptr<const token_vocabulary> v, size_t max_cached_bytes)
  : grammar_(std::move(g)), vocab_(std::move(v)), max_cached_(max_cached_bytes) {}

token_mask token_grammar::walk(grammar_matcher& m, const grammar_matcher::state& s) const {
  ++num_walks_;
  const token_vocabulary& v = *vocab_;
  token_mask mask;
  mask.bits.assign((v.vocab_size() + 63) / 64, 0);
  auto allow = [&](token_id t) { mask.bits[size_t(t) >> 6] |= uint64_t{1} << (size_t(t) & 63); };
  if (s.complete)
    for (token_id t : v.end_tokens()) allow(t);
  const std::vector<token_id>& sorted = v.sorted();
  const std::vector<uint32_t>& lcp = v.shared_prefix();
  const size_t mark = m.mark();
  // at[d]: the state after the current token's first d bytes, valid for
  // d <= valid.
  std::vector<grammar_matcher::state> at(1, s);
  size_t valid = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string& b = v.bytes(sorted[i]);
    if (at.size() < b.size() + 1) at.resize(b.size() + 1);
    size_t d = std::min<size_t>(lcp[i], valid);
    bool ok = true;
    while (d < b.size()) {
      if (at[d].tops.empty()) { // complete: nothing may follow
        ok = false;
        break;
      }
      m.step(at[d], static_cast<uint8_t>(b[d]), at[d + 1]);
      ++d;
      if (at[d].dead()) {
        ok = false;
        break;
      }
    }
    valid = d;
    if (ok) {
      allow(sorted[i]);
      continue;
    }
    // NOTE: every token after this one that shares its first d bytes is
    // refused with it (they come next in byte order).
    while (i + 1 < sorted.size() && lcp[i + 1] >= d) ++i;
  }
  m.rollback(mark);
  return mask;
}

std::shared_ptr<const token_mask> token_grammar::mask(grammar_matcher& m) const {
  std::string key = m.key(m.current());
  {
    std::lock_guard lock(mutex_);
    if (auto at = cache_.find(key); at != cache_.end()) {
      ++num_hits_;
      return at->second;
    }
  }
  auto mask = std::make_shared<const token_mask>(walk(m, m.current()));
  std::lock_guard lock(mutex_);
  const size_t bytes = mask->bits.size() * sizeof(uint64_t);
  if ((cache_.size() + 1) * bytes <= max_cached_) cache_.emplace(std::move(key), mask);
  return mask;
}

token_matcher::token_matcher(std::shared_ptr<const token_grammar> g)
  : grammar_(std::move(g)), matcher_(grammar_->rules()) {}

bool token_matcher::accept(token_id t) {
  const token_vocabulary& v = grammar_->vocabulary();
  if (v.is_end(t)) return matcher_.can_end();
  if (t < 0 || size_t(t) >= v.num_ids()) // padding ids beyond the tokenizer's
    return false;
  const std::string& b = v.bytes(t);
  return !b.empty() && matcher_.advance(b);
}

} // namespace kvactor::model
