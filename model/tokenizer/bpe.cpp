#include "model/tokenizer/bpe.hpp"

#include <cstdio>
#include <queue>

#include "model/tokenizer/byte_level.hpp"
#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {

result<bpe_model> bpe_model::build(const std::vector<std::pair<std::string, token_id>>& vocab,
                                   const std::vector<std::pair<std::string, std::string>>& merges,
                                   const std::optional<std::string>& unk_token, bool ignore_merges,
                                   std::string_view source) {
  bpe_model m;
  m.ignore_merges_ = ignore_merges;
  m.vocab_.reserve(vocab.size());
  for (const auto& [symbols, id] : vocab)
    if (!m.vocab_.emplace(symbols, id).second)
      return make_error(source, "key 'model.vocab': token '" + symbols + "' appears twice");
  if (unk_token) {
    auto it = m.vocab_.find(*unk_token);
    if (it == m.vocab_.end())
      return make_error(source,
                        "key 'model.unk_token': '" + *unk_token + "' is not in the vocabulary");
    m.unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    append_utf8(sym, byte_to_symbol(static_cast<uint8_t>(b)));
    auto it = m.vocab_.find(sym);
    m.byte_ids_[b] = it == m.vocab_.end() ? -1 : it->second;
    if (it == m.vocab_.end() && !m.unk_id_) {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "key 'model.vocab': no token for byte 0x%02X ('%s') and no unk_token", b,
                    sym.c_str());
      return make_error(source, buf);
    }
  }
  m.merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto ia = m.vocab_.find(a), ib = m.vocab_.find(b), ir = m.vocab_.find(a + b);
    if (ia == m.vocab_.end() || ib == m.vocab_.end() || ir == m.vocab_.end())
      return make_error(source, "key 'model.merges[" + std::to_string(rank) + "]': merge '" + a +
                                  " " + b + "' uses a token that is not in the vocabulary");
    // NOTE: a repeated pair keeps its first (best) rank, as in HF tokenizers.
    m.merges_.emplace(pair_key(ia->second, ib->second),
                      merge{static_cast<uint32_t>(rank), ir->second});
  }
  return m;
}

std::optional<token_id> bpe_model::find(std::string_view symbols) const {
  auto it = vocab_.find(std::string(symbols));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void bpe_model::encode_piece(std::string_view bytes, std::vector<token_id>& out) const {
  if (bytes.empty()) return;
  if (ignore_merges_) {
    if (auto id = find(bytes_to_symbols(bytes))) {
      out.push_back(*id);
      return;
    }
  }
  // Symbols as a linked list; candidate merges in a heap ordered by
  // (rank, position), so the best-ranked, leftmost pair merges first.
  struct symbol {
    token_id id;
    int prev, next;
  };
  std::vector<symbol> sym(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const token_id id = byte_ids_[static_cast<uint8_t>(bytes[i])];
    sym[i] = {id >= 0 ? id : *unk_id_, static_cast<int>(i) - 1, static_cast<int>(i) + 1};
  }
  sym.back().next = -1;
  struct candidate {
    uint32_t rank;
    int left;
    token_id left_id, right_id;
    bool operator>(const candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<candidate, std::vector<candidate>, std::greater<>> heap;
  auto push = [&](int left) {
    if (left < 0) return;
    const int right = sym[left].next;
    if (right < 0) return;
    auto it = merges_.find(pair_key(sym[left].id, sym[right].id));
    if (it != merges_.end()) heap.push({it->second.rank, left, sym[left].id, sym[right].id});
  };
  for (int i = 0; i + 1 < static_cast<int>(sym.size()); ++i) push(i);
  while (!heap.empty()) {
    const candidate c = heap.top();
    heap.pop();
    const int right = sym[c.left].next;
    // Stale: the left symbol was merged away (its id changed) or its right
    // neighbour changed since the candidate was pushed.
    if (sym[c.left].id != c.left_id || right < 0 || sym[right].id != c.right_id) continue;
    sym[c.left].id = merges_.at(pair_key(c.left_id, c.right_id)).result;
    sym[c.left].next = sym[right].next;
    if (sym[right].next >= 0) sym[sym[right].next].prev = c.left;
    sym[right].id = -1; // dead
    push(sym[c.left].prev);
    push(c.left);
  }
  for (int i = 0; i >= 0; i = sym[i].next) out.push_back(sym[i].id);
}

} // namespace kvactor::model
