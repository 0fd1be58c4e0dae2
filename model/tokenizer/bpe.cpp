#include "model/tokenizer/bpe.hpp"

#include <cstdio>
#include <queue>

#include "model/tokenizer/byte_level.hpp"
#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {

result<bpe_model> bpe_model::build(const std::vector<std::pair<std::string, token_id>>& vocab,
                                   const std::vector<std::pair<std::string, std::string>>& merges,
                                   const bpe_options& options, std::string_view source) {
  bpe_model m;
  m.options_ = options;
  m.vocab_.reserve(vocab.size());
  for (const auto& [symbols, id] : vocab)
    if (!m.vocab_.emplace(symbols, id).second)
      return error_in(source, "key 'model.vocab': token '" + symbols + "' appears twice");
  if (options.unk_token) {
    auto it = m.vocab_.find(*options.unk_token);
    if (it == m.vocab_.end())
      return error_in(source, "key 'model.unk_token': '" + *options.unk_token +
                                  "' is not in the vocabulary");
    m.unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    std::string sym = name;
    if (options.byte_level) {
      sym.clear();
      append_utf8(sym, byte_to_symbol(static_cast<uint8_t>(b)));
    }
    auto it = m.vocab_.find(sym);
    m.byte_ids_[b] = it == m.vocab_.end() ? -1 : it->second;
    if (options.byte_level && it == m.vocab_.end() && !m.unk_id_) {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "key 'model.vocab': no token for byte 0x%02X ('%s') and no unk_token", b,
                    sym.c_str());
      return error_in(source, buf);
    }
  }
  m.merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto ia = m.vocab_.find(a), ib = m.vocab_.find(b), ir = m.vocab_.find(a + b);
    if (ia == m.vocab_.end() || ib == m.vocab_.end() || ir == m.vocab_.end())
      return error_in(source, "key 'model.merges[" + std::to_string(rank) + "]': merge '" + a +
                                  " " + b + "' uses a token that is not in the vocabulary");
    // NOTE: a repeated pair keeps its first (best) rank, as in HF tokenizers.
    m.merges_.emplace(pair_key(ia->second, ib->second),
                      merge{static_cast<uint32_t>(rank), ir->second});
  }
  return m;
}

std::optional<token_id> bpe_model::find(std::string_view symbols) const {
  auto it = vocab_.find(symbols);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void bpe_model::split_characters(std::string_view text, std::vector<token_id>& ids) const {
  bool pending_unk = false;
  auto flush_unk = [&] {
    if (pending_unk) ids.push_back(*unk_id_);
    pending_unk = false;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = decode_utf8(text, i);
    const std::size_t len = c.valid ? c.length : 1;
    const std::string_view ch = text.substr(i, len);
    i += len;
    if (auto it = vocab_.find(ch); it != vocab_.end()) {
      flush_unk();
      ids.push_back(it->second);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (char b : ch) all = all && byte_ids_[static_cast<uint8_t>(b)] >= 0;
      if (all) {
        flush_unk();
        for (char b : ch) ids.push_back(byte_ids_[static_cast<uint8_t>(b)]);
        continue;
      }
    }
    // NOTE: without an unknown token the character is dropped, where HF
    // tokenizers fails the whole encode; kvactor's vocabularies have one.
    if (!unk_id_) continue;
    if (!options_.fuse_unk) flush_unk();
    pending_unk = true;
  }
  flush_unk();
}

void bpe_model::encode_piece(std::string_view text, std::vector<token_id>& out) const {
  if (text.empty()) return;
  if (options_.ignore_merges) {
    if (auto id = find(options_.byte_level ? bytes_to_symbols(text) : std::string(text))) {
      out.push_back(*id);
      return;
    }
  }
  std::vector<token_id> ids;
  if (options_.byte_level) {
    ids.reserve(text.size());
    for (char b : text) {
      const token_id id = byte_ids_[static_cast<uint8_t>(b)];
      ids.push_back(id >= 0 ? id : *unk_id_);
    }
  } else {
    split_characters(text, ids);
  }
  merge_all(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

// Merges the best-ranked, leftmost pair until no pair has a merge: symbols
// as a linked list, candidate merges in a heap ordered by (rank, position).
void bpe_model::merge_all(std::vector<token_id>& ids) const {
  if (ids.size() < 2) return;
  struct symbol {
    token_id id;
    int prev, next;
  };
  std::vector<symbol> sym(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    sym[i] = {ids[i], static_cast<int>(i) - 1, static_cast<int>(i) + 1};
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
  ids.clear();
  for (int i = 0; i >= 0; i = sym[i].next) ids.push_back(sym[i].id);
}

} // namespace kvactor::model
