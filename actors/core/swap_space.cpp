#include "actors/core/swap_space.hpp"

#include "base/assert.hpp"

namespace kvactor {

swap_space::swap_space(int32_t num_blocks) : num_blocks_(num_blocks) {
  KVACTOR_ASSERT(num_blocks >= 0, "negative host pool size");
  free_.reserve(num_blocks);
  for (block_id b = num_blocks - 1; b >= 0; --b)
    free_.push_back(b);
}

std::optional<std::vector<block_copy>> swap_space::swap_out(
  seq_id seq, std::span<const block_id> device_blocks) {
  KVACTOR_ASSERT(!holds(seq), "sequence already swapped out");
  const auto n = static_cast<int32_t>(device_blocks.size());
  if (!can_swap_out(n))
    return std::nullopt;
  auto& host = held_[seq];
  std::vector<block_copy> copies;
  copies.reserve(n);
  for (block_id src : device_blocks) {
    host.push_back(free_.back());
    free_.pop_back();
    copies.push_back({src, host.back()});
  }
  return copies;
}

std::span<const block_id> swap_space::host_blocks(seq_id seq) const {
  auto i = held_.find(seq);
  KVACTOR_ASSERT(i != held_.end(), "sequence not in swap space");
  return i->second;
}

std::vector<block_copy> swap_space::swap_in(seq_id seq,
                                            std::span<const block_id> device_blocks) const {
  auto host = host_blocks(seq);
  KVACTOR_ASSERT(host.size() == device_blocks.size(), "swap-in into a different block count");
  std::vector<block_copy> copies;
  copies.reserve(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    copies.push_back({host[i], device_blocks[i]});
  return copies;
}

void swap_space::release(seq_id seq) {
  auto i = held_.find(seq);
  KVACTOR_ASSERT(i != held_.end(), "release of a sequence not in swap space");
  for (block_id b : i->second)
    free_.push_back(b);
  held_.erase(i);
}

std::vector<seq_id> swap_space::sequences() const {
  std::vector<seq_id> out;
  out.reserve(held_.size());
  for (const auto& [seq, blocks] : held_)
    out.push_back(seq);
  return out;
}

} // namespace kvactor
