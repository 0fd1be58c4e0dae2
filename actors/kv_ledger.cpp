#include "actors/kv_ledger.hpp"

#include "actors/pool_invariants.hpp"
#include "kernels/assert.hpp"

#include <algorithm>

namespace kvactor {

kv_ledger::kv_ledger(int32_t num_blocks, int32_t block_size, bool prefix_caching)
  : blocks_(num_blocks, block_size), prefix_caching_(prefix_caching) {
}

sequence& kv_ledger::sync(const reservation_entry& e) {
  auto i = seqs_.find(e.id);
  if (i == seqs_.end()) {
    KVACTOR_ASSERT(!e.new_tokens.empty(), "first reservation of a sequence without its tokens");
    i = seqs_.emplace(e.id, sequence(e.id, e.new_tokens, blocks_.block_size())).first;
  } else {
    for (token_id t : e.new_tokens)
      i->second.append_token(t);
  }
  note_computed(i->second, e.num_computed); // includes what the last step computed
  return i->second;
}

void kv_ledger::note_computed(sequence& seq, int32_t num_computed) {
  KVACTOR_ASSERT(num_computed >= seq.num_computed_tokens(), "computed count went backwards");
  seq.add_computed_tokens(num_computed - seq.num_computed_tokens());
  if (prefix_caching_)
    blocks_.cache_computed_blocks(seq);
}

reservation_result kv_ledger::reserve(const std::vector<reservation_entry>& entries) {
  reservation_result r;
  for (size_t i = 0; i < entries.size(); ++i) {
    sequence& seq = sync(entries[i]);
    std::optional<prefix_hit> hit;
    if (prefix_caching_ && seq.table().empty() && seq.num_computed_tokens() == 0)
      hit = blocks_.find_cached_prefix(seq);
    const int32_t hit_tokens = hit ? int32_t(hit->blocks.size()) * blocks_.block_size() : 0;
    const int32_t n = std::min(entries[i].num_new_tokens, seq.num_uncomputed_tokens() - hit_tokens);
    auto copies = blocks_.allocate_slots(seq, n, hit ? &*hit : nullptr);
    if (!copies) {
      r.denied = static_cast<int32_t>(i);
      r.num_blocks_short = blocks_.num_blocks_needed(seq, n, hit ? &*hit : nullptr) -
                           blocks_.pool().num_available_blocks();
      break;
    }
    r.copies.insert(r.copies.end(), copies->begin(), copies->end());
    auto table = seq.table().blocks();
    r.granted.push_back({seq.id(), seq.num_computed_tokens(), n, hit_tokens,
                         {table.begin(), table.end()}});
  }
  return r;
}

std::vector<block_id> kv_ledger::blocks_of(seq_id id) const {
  auto table = seqs_.at(id).table().blocks();
  return {table.begin(), table.end()};
}

void kv_ledger::release_swapped(seq_id id) {
  blocks_.free(seqs_.at(id));
}

void kv_ledger::release(seq_id id, int32_t num_computed) {
  sequence& seq = seqs_.at(id);
  note_computed(seq, num_computed);
  blocks_.free(seq);
  seq.reset_computed();
}

void kv_ledger::forget(seq_id id, int32_t num_computed) {
  auto i = seqs_.find(id);
  if (i == seqs_.end())
    return; // never reserved anything
  if (!i->second.table().empty())
    note_computed(i->second, num_computed);
  blocks_.free(i->second);
  seqs_.erase(i);
}

std::optional<std::vector<block_id>> kv_ledger::allocate_for_swap_in(seq_id id,
                                                                     int32_t num_blocks) {
  sequence& seq = seqs_.at(id);
  if (!blocks_.allocate_for_swap_in(seq, num_blocks))
    return std::nullopt;
  auto table = seq.table().blocks();
  return std::vector<block_id>(table.begin(), table.end());
}

std::vector<std::string> kv_ledger::check_invariants() const {
  std::vector<const block_table*> tables;
  for (const auto& [id, seq] : seqs_)
    tables.push_back(&seq.table());
  return kvactor::check_invariants(blocks_.pool(), tables);
}

} // namespace kvactor
