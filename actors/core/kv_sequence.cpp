#include "actors/core/kv_sequence.hpp"

#include "actors/core/block_hash.hpp"
#include "base/assert.hpp"

namespace kvactor {

kv_sequence::kv_sequence(seq_id id, std::vector<token_id> tokens, int32_t block_size)
  : id_(id), tokens_(std::move(tokens)), table_(block_size) {
  KVACTOR_ASSERT(!tokens_.empty(), "a sequence needs at least one prompt token");
  hash_full_blocks();
}

kv_sequence kv_sequence::fork(seq_id child_id) const {
  kv_sequence child = *this;
  child.id_ = child_id;
  return child;
}

void kv_sequence::append_token(token_id t) {
  tokens_.push_back(t);
  if (num_tokens() % table_.block_size() == 0) // only then does a block fill up
    hash_full_blocks();
}

void kv_sequence::add_computed_tokens(int32_t n) {
  KVACTOR_ASSERT(n >= 0 && num_computed_tokens_ + n <= num_tokens(),
                 "computed tokens beyond the sequence");
  KVACTOR_ASSERT(num_computed_tokens_ + n <= table_.num_slots(), "computed tokens without slots");
  num_computed_tokens_ += n;
}

void kv_sequence::reset_computed() {
  KVACTOR_ASSERT(table_.empty(), "reset with blocks still held");
  num_computed_tokens_ = 0;
  num_cached_blocks_ = 0;
}

block_hash kv_sequence::parent_hash(int32_t block_index) const {
  return block_index == 0 ? root_block_hash : block_hashes_[block_index - 1];
}

void kv_sequence::hash_full_blocks() {
  const int32_t bs = table_.block_size();
  for (auto i = static_cast<int32_t>(block_hashes_.size()); (i + 1) * bs <= num_tokens(); ++i) {
    auto block_tokens = std::span<const token_id>(tokens_).subspan(size_t(i) * bs, bs);
    block_hashes_.push_back(hash_block(parent_hash(i), block_tokens));
  }
}

} // namespace kvactor
