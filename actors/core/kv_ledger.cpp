#include "actors/core/kv_ledger.hpp"

#include "actors/core/pool_invariants.hpp"
#include "base/assert.hpp"

#include <algorithm>

namespace kvactor {

kv_ledger::kv_ledger(int32_t num_blocks, int32_t block_size, bool prefix_caching)
  : blocks_(num_blocks, block_size), prefix_caching_(prefix_caching) {
}

kv_ledger::record& kv_ledger::sync(const reservation_entry& e) {
  auto i = seqs_.find(e.id);
  if (i == seqs_.end()) {
    KVACTOR_ASSERT(!e.new_tokens.empty(), "first reservation of a sequence without its tokens");
    std::vector<token_id> prompt(e.new_tokens.begin(), e.new_tokens.end());
    i =
      seqs_.emplace(e.id, record{kv_sequence(e.id, std::move(prompt), blocks_.block_size())}).first;
  } else {
    for (token_id t : e.new_tokens)
      i->second.seq.append_token(t);
  }
  note_computed(i->second.seq, e.num_computed); // includes what the last step computed
  return i->second;
}

void kv_ledger::note_computed(kv_sequence& seq, int32_t num_computed) {
  KVACTOR_ASSERT(num_computed >= seq.num_computed_tokens(), "computed count went backwards");
  seq.add_computed_tokens(num_computed - seq.num_computed_tokens());
  if (prefix_caching_)
    blocks_.cache_computed_blocks(seq);
}

reservation_result kv_ledger::reserve(const std::vector<reservation_entry>& entries) {
  reservation_result r;
  r.granted.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    record& rec = sync(entries[i]);
    kv_sequence& seq = rec.seq;
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
    // NOTE: a copy-on-write replaced blocks from the first one being
    // written on; the grant sends the table again from there.
    if (!copies->empty())
      rec.num_granted_blocks =
        std::min(rec.num_granted_blocks, seq.num_computed_tokens() / blocks_.block_size());
    auto table = seq.table().blocks();
    granted_entry& g = r.granted.emplace_back();
    g.id = seq.id();
    g.start = seq.num_computed_tokens();
    g.num_new_tokens = n;
    g.num_cached_tokens = hit_tokens;
    g.blocks.num_kept = rec.num_granted_blocks;
    g.blocks.added.assign(table.begin() + rec.num_granted_blocks, table.end());
    rec.num_granted_blocks = seq.table().num_blocks();
  }
  return r;
}

std::vector<block_id> kv_ledger::blocks_of(seq_id id) const {
  auto table = seqs_.at(id).seq.table().blocks();
  return {table.begin(), table.end()};
}

void kv_ledger::release_swapped(seq_id id) {
  record& rec = seqs_.at(id);
  blocks_.free(rec.seq);
  rec.num_granted_blocks = 0;
}

void kv_ledger::release(seq_id id, int32_t num_computed) {
  record& rec = seqs_.at(id);
  note_computed(rec.seq, num_computed);
  blocks_.free(rec.seq);
  rec.seq.reset_computed();
  rec.num_granted_blocks = 0;
}

void kv_ledger::fork(seq_id parent, seq_id child) {
  KVACTOR_ASSERT(!seqs_.contains(child), "fork into a sequence the ledger holds");
  kv_sequence copy = blocks_.fork(seqs_.at(parent).seq, child);
  seqs_.emplace(child, record{std::move(copy)}); // its first grant conveys the whole table
}

void kv_ledger::forget(seq_id id, int32_t num_computed) {
  auto i = seqs_.find(id);
  if (i == seqs_.end())
    return; // never reserved anything
  kv_sequence& seq = i->second.seq;
  if (!seq.table().empty())
    note_computed(seq, num_computed);
  blocks_.free(seq);
  seqs_.erase(i);
}

std::optional<std::vector<block_id>> kv_ledger::allocate_for_swap_in(seq_id id,
                                                                     int32_t num_blocks) {
  record& rec = seqs_.at(id);
  if (!blocks_.allocate_for_swap_in(rec.seq, num_blocks))
    return std::nullopt;
  rec.num_granted_blocks = 0; // the executor learns the new blocks from the next grant
  auto table = rec.seq.table().blocks();
  return std::vector<block_id>(table.begin(), table.end());
}

pool_figures kv_ledger::figures() const {
  pool_figures f = blocks_.figures();
  f.num_sequences = num_sequences();
  return f;
}

std::vector<std::string> kv_ledger::check_invariants() const {
  std::vector<const block_table*> tables;
  for (const auto& [id, rec] : seqs_)
    tables.push_back(&rec.seq.table());
  return kvactor::check_invariants(blocks_.pool(), tables);
}

} // namespace kvactor
