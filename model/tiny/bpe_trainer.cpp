#include "model/tiny/bpe_trainer.hpp"

#include <map>
#include <unordered_map>

#include "model/tokenizer/byte_level.hpp"

namespace kvactor::model::tiny {

tokenizer_spec train_bpe(std::string_view text, split_pattern pattern, std::size_t max_new_tokens) {
  tokenizer_spec spec;
  spec.splits = {pattern};
  std::vector<std::string> token_bytes; // id -> raw bytes
  std::unordered_map<std::string, token_id> id_of;
  for (int b = 0; b < 256; ++b) {
    token_bytes.emplace_back(1, static_cast<char>(b));
    id_of.emplace(token_bytes.back(), b);
  }

  // Distinct pieces with their counts, in first-seen order for determinism.
  struct word {
    std::vector<token_id> symbols;
    int64_t count;
  };
  std::vector<word> words;
  {
    std::map<std::string_view, std::size_t> index;
    for (auto piece : pre_split(text, pattern)) {
      auto [it, inserted] = index.emplace(piece, words.size());
      if (inserted) {
        word w{{}, 0};
        for (char c : piece) w.symbols.push_back(static_cast<unsigned char>(c));
        words.push_back(std::move(w));
      }
      ++words[it->second].count;
    }
  }

  auto key = [](token_id a, token_id b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  };
  // Pair counts, kept up to date: a merge only touches the words that hold
  // the merged pair.
  std::unordered_map<uint64_t, int64_t> pair_counts;
  auto count_pairs = [&](const word& w, int64_t sign) {
    for (std::size_t i = 0; i + 1 < w.symbols.size(); ++i)
      pair_counts[key(w.symbols[i], w.symbols[i + 1])] += sign * w.count;
  };
  for (const auto& w : words) count_pairs(w, +1);

  std::size_t num_new = 0;
  while (num_new < max_new_tokens) {
    uint64_t best = 0;
    int64_t best_count = 0;
    for (const auto& [k, n] : pair_counts)
      if (n > best_count || (n == best_count && k < best)) {
        best = k;
        best_count = n;
      }
    // NOTE: a pair seen once is noise, not a pattern; stop there.
    if (best_count < 2) break;
    const auto a = static_cast<token_id>(best >> 32), b = static_cast<token_id>(best & 0xffffffffu);
    const std::string merged =
      token_bytes[static_cast<std::size_t>(a)] + token_bytes[static_cast<std::size_t>(b)];
    token_id id;
    if (auto it = id_of.find(merged); it != id_of.end()) {
      id = it->second; // the same bytes reached by another pair: same token
    } else {
      id = static_cast<token_id>(token_bytes.size());
      token_bytes.push_back(merged);
      id_of.emplace(merged, id);
      ++num_new;
    }
    spec.merges.emplace_back(bytes_to_symbols(token_bytes[static_cast<std::size_t>(a)]),
                             bytes_to_symbols(token_bytes[static_cast<std::size_t>(b)]));
    for (auto& w : words) {
      bool holds = false;
      for (std::size_t i = 0; i + 1 < w.symbols.size() && !holds; ++i)
        holds = w.symbols[i] == a && w.symbols[i + 1] == b;
      if (!holds) continue;
      count_pairs(w, -1);
      std::vector<token_id> out;
      out.reserve(w.symbols.size());
      for (std::size_t i = 0; i < w.symbols.size(); ++i) {
        if (i + 1 < w.symbols.size() && w.symbols[i] == a && w.symbols[i + 1] == b) {
          out.push_back(id);
          ++i;
        } else {
          out.push_back(w.symbols[i]);
        }
      }
      w.symbols = std::move(out);
      count_pairs(w, +1);
    }
    pair_counts.erase(best);
    if (pair_counts.size() > 4 * words.size())
      std::erase_if(pair_counts, [](const auto& kv) { return kv.second <= 0; });
  }
  for (std::size_t id = 0; id < token_bytes.size(); ++id)
    spec.vocab.emplace_back(bytes_to_symbols(token_bytes[id]), static_cast<token_id>(id));
  return spec;
}

} // namespace kvactor::model::tiny
