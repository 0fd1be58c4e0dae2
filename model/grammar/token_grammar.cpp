#include "model/grammar/token_grammar.hpp"

#include <algorithm>
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


namespace {

enum class outcome : uint8_t { accepted, undecided };

// The states one walk passes through, each kept once with the moves made
// from it. Many prefixes reach one state — every run of a string's
// characters reaches the string's next character — so a byte is stepped
// once per state it leaves, not once per token through it. Holds the
// matcher's nodes made meanwhile (a state's tops are node ids, equal for
// equal states) and drops them when it ends.
//
// NOTE: a row of moves is 1 KiB. A grammar that remembers its bytes (many
// literals: a long enum, many names) reaches a state per prefix it accepts,
// up to the vocabulary's bytes; past `max_states` the table starts again
// from the states on the current token's path (restart).
class walk_table {
public:
  walk_table(grammar_matcher& m, const grammar_matcher::state& start, size_t max_states)
    : m_(m), mark_(m.mark()), max_states_(max_states) {
    intern(start);
  }
  ~walk_table() { m_.rollback(mark_); }
  walk_table(const walk_table&) = delete;
  walk_table& operator=(const walk_table&) = delete;

  const grammar_matcher::state& state(int32_t id) const { return *states_[size_t(id)]; }
  // The state after byte b from state `from`.
  int32_t next(int32_t from, uint8_t b) {
    const size_t move = size_t(from) * 256 + b;
    if (moves_[move] < 0) {
      m_.step(*states_[size_t(from)], b, scratch_);
      const int32_t to = intern(scratch_);
      moves_[move] = to;
    }
    return moves_[move];
  }
  bool full() const { return states_.size() >= max_states_; }
  // Keeps only the states of `path` (ids), renumbered in place.
  void restart(std::span<int32_t> path) {
    std::vector<grammar_matcher::state> kept;
    for (int32_t id : path) kept.push_back(state(id));
    states_.clear();
    moves_.clear();
    ids_.clear();
    for (size_t d = 0; d < path.size(); ++d) path[d] = intern(kept[d]);
  }

private:
  struct hash {
    size_t operator()(const grammar_matcher::state& s) const {
      uint64_t h = s.complete ? 0x9e3779b97f4a7c15u : 0;
      for (int32_t t : s.tops) h = (h ^ static_cast<uint32_t>(t)) * 0x100000001b3u;
      return static_cast<size_t>(h);
    }
  };
  struct equal {
    bool operator()(const grammar_matcher::state& a, const grammar_matcher::state& b) const {
      return a.complete == b.complete && a.tops == b.tops;
    }
  };
  int32_t intern(const grammar_matcher::state& s) {
    auto [found, fresh] = ids_.try_emplace(s, static_cast<int32_t>(states_.size()));
    if (fresh) {
      states_.push_back(&found->first); // a node's key stays where it is
      moves_.resize(moves_.size() + 256, -1);
    }
    return found->second;
  }

  grammar_matcher& m_;
  size_t mark_;
  size_t max_states_;
  std::unordered_map<grammar_matcher::state, int32_t, hash, equal> ids_;
  std::vector<const grammar_matcher::state*> states_; // by id
  std::vector<int32_t> moves_; // [id * 256 + byte] -> id, -1 until made
  grammar_matcher::state scratch_;
};

// Walks the tokens at sorted positions pos(0) < pos(1) < ... < pos(n - 1),
// each sharing lcp(k) leading bytes with the one before, from state s, as a
// trie: a token starts from the state its shared prefix reached, and a
// prefix that fails decides every token after it that begins with it.
// seen(k, outcome) for each token accepted, or undecided: refused from s
// after some prefix of it completed s (so whatever lies below s could take
// the rest). Refused tokens are not reported. end(k, d): the first
// position after k whose token does not share k's first d bytes.
template <class Pos, class Lcp, class End, class Seen>
void walk_tokens(const token_vocabulary& v, grammar_matcher& m, const grammar_matcher::state& s,
                 size_t max_states, size_t n, Pos pos, Lcp lcp, End end, Seen seen) {
  const std::vector<token_id>& sorted = v.sorted();
  walk_table table(m, s, max_states);
  // at[d]: the id of the state after the current token's first d bytes,
  // valid for d <= valid; ended[d]: whether one of those prefixes completed s.
  std::vector<int32_t> at(1, 0);
  std::vector<uint8_t> ended(1, 0);
  size_t valid = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string& b = v.bytes(sorted[pos(k)]);
    if (at.size() < b.size() + 1) {
      at.resize(b.size() + 1);
      ended.resize(b.size() + 1);
    }
    size_t d = std::min<size_t>(lcp(k), valid);
    bool ok = true;
    while (d < b.size()) {
      if (table.state(at[d]).tops.empty()) { // complete: nothing may follow
        ok = false;
        break;
      }
      if (table.full()) table.restart(std::span(at).first(d + 1));
      at[d + 1] = table.next(at[d], static_cast<uint8_t>(b[d]));
      const grammar_matcher::state& to = table.state(at[d + 1]);
      ended[d + 1] = ended[d] || to.complete;
      ++d;
      if (to.dead()) {
        ok = false;
        break;
      }
    }
    valid = d;
    if (ok) {
      seen(k, outcome::accepted);
      continue;
    }
    // NOTE: every token after this one that shares its first d bytes fails
    // with it, and the same way (they come next in byte order).
    if (ended[d] == 0) {
      k = end(k, d) - 1;
      continue;
    }
    seen(k, outcome::undecided);
    while (k + 1 < n && lcp(k + 1) >= d) seen(++k, outcome::undecided);
  }
}

void allow(token_mask& mask, token_id t) {
  mask.bits[size_t(t) >> 6] |= uint64_t{1} << (size_t(t) & 63);
}

token_mask empty_mask(const token_vocabulary& v, const grammar_matcher::state& s) {
  token_mask mask;
  mask.bits.assign((v.vocab_size() + 63) / 64, 0);
  if (s.complete)
    for (token_id t : v.end_tokens()) allow(mask, t);
  return mask;
}

size_t common_prefix(const std::string& a, const std::string& b) {
  return static_cast<size_t>(std::ranges::mismatch(a, b).in1 - a.begin());
}

// Every token in byte order, with the vocabulary's shared prefixes.
template <class Seen>
void walk_vocabulary(const token_vocabulary& v, grammar_matcher& m,
                     const grammar_matcher::state& s, size_t max_states, Seen seen) {
  walk_tokens(
    v, m, s, max_states, v.sorted().size(), [](size_t k) { return k; },
    [&](size_t k) { return v.shared_prefix()[k]; },
    [&](size_t k, size_t d) { return v.prefix_end(k, d); }, seen);
}

// NOTE: past an eighth of the vocabulary undecided, walking them as a
// subset (each paying for its shared prefix with the one before) costs more
// than the trie walk of the whole vocabulary.
bool cheaper_whole(size_t num_undecided, const token_vocabulary& v) {
  return num_undecided * 8 > v.sorted().size();
}

} // namespace

size_t top_split::bytes() const {
  return accepted_bits.bits.size() * sizeof(uint64_t) + accepted_ids.size() * sizeof(token_id) +
         undecided.size() * sizeof(uint32_t);
}

bool top_split::accepts(token_id t) const {
  return accepted_bits.bits.empty() ? std::ranges::count(accepted_ids, t) > 0
                                    : accepted_bits.allows(t);
}

void top_split::accept_into(token_mask& mask) const {
  for (size_t w = 0; w < accepted_bits.bits.size(); ++w) mask.bits[w] |= accepted_bits.bits[w];
  for (token_id t : accepted_ids) allow(mask, t);
}

token_grammar::token_grammar(std::shared_ptr<const grammar> g,
                             std::shared_ptr<const token_vocabulary> v, token_grammar_limits limits)
  : grammar_(std::move(g)),
    vocab_(std::move(v)),
    limits_(limits),
    splits_(grammar_->slots.size()) {}

std::shared_ptr<const top_split> token_grammar::split(grammar_matcher& m, uint32_t slot) const {
  {
    std::lock_guard lock(mutex_);
    if (splits_[slot]) return splits_[slot];
  }
  const token_vocabulary& v = *vocab_;
  const std::vector<token_id>& sorted = v.sorted();
  auto split = std::make_shared<top_split>();
  std::vector<token_id> accepted;
  const size_t mark = m.mark();
  walk_vocabulary(v, m, m.alone(slot), limits_.max_walk_states, [&](size_t k, outcome o) {
    if (o == outcome::accepted)
      accepted.push_back(sorted[k]);
    else
      split->undecided.push_back(static_cast<uint32_t>(k));
  });
  m.rollback(mark);
  const auto whole = [] {
    auto w = std::make_shared<top_split>();
    w->whole = true;
    return w;
  };
  if (cheaper_whole(split->undecided.size(), v)) {
    split = whole();
  } else if (accepted.size() * 32 < v.vocab_size()) { // a list is the smaller
    split->accepted_ids = std::move(accepted);
  } else {
    split->accepted_bits.bits.assign((v.vocab_size() + 63) / 64, 0);
    for (token_id t : accepted) allow(split->accepted_bits, t);
  }
  std::lock_guard lock(mutex_);
  if (splits_[slot]) return splits_[slot]; // another row made it first
  if (split_bytes_ + split->bytes() > limits_.max_cached_bytes) split = whole();
  split_bytes_ += split->bytes();
  return splits_[slot] = std::move(split);
}

token_mask token_grammar::walk(grammar_matcher& m, const grammar_matcher::state& s) const {
  ++num_walks_;
  if (!limits_.split_tops) return walk_all(m, s);
  std::vector<uint32_t> slots;
  for (int32_t top : s.tops) slots.push_back(m.slot_of(top));
  std::ranges::sort(slots);
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  const token_vocabulary& v = *vocab_;
  token_mask mask = empty_mask(v, s);
  std::vector<uint32_t> undecided;
  for (uint32_t slot : slots) {
    const std::shared_ptr<const top_split> split = this->split(m, slot);
    if (split->whole) return walk_all(m, s);
    split->accept_into(mask);
    undecided.insert(undecided.end(), split->undecided.begin(), split->undecided.end());
  }
  if (slots.size() > 1) {
    std::ranges::sort(undecided);
    undecided.erase(std::unique(undecided.begin(), undecided.end()), undecided.end());
  }
  const std::vector<token_id>& sorted = v.sorted();
  std::erase_if(undecided, [&](uint32_t k) { return mask.allows(sorted[k]); });
  if (cheaper_whole(undecided.size(), v)) return walk_all(m, s);
  std::vector<size_t> shared(undecided.size(), 0); // with the undecided token before
  for (size_t k = 1; k < undecided.size(); ++k)
    shared[k] = common_prefix(v.bytes(sorted[undecided[k - 1]]), v.bytes(sorted[undecided[k]]));
  walk_tokens(
    v, m, s, limits_.max_walk_states, undecided.size(), [&](size_t k) { return undecided[k]; },
    [&](size_t k) { return shared[k]; },
    [&](size_t k, size_t d) {
      while (k + 1 < shared.size() && shared[k + 1] >= d) ++k;
      return k + 1;
    },
    [&](size_t k, outcome o) {
      if (o == outcome::accepted) allow(mask, sorted[undecided[k]]);
    });
  return mask;
}

token_mask token_grammar::walk_all(grammar_matcher& m, const grammar_matcher::state& s) const {
  const token_vocabulary& v = *vocab_;
  token_mask mask = empty_mask(v, s);
  const std::vector<token_id>& sorted = v.sorted();
  walk_vocabulary(v, m, s, limits_.max_walk_states, [&](size_t k, outcome o) {
    if (o == outcome::accepted) allow(mask, sorted[k]);
  });
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
  if ((cache_.size() + 1) * bytes <= limits_.max_cached_bytes) cache_.emplace(std::move(key), mask);
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
