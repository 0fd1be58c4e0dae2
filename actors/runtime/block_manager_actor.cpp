// block_manager_actor: the kv_ledger behind messages.

#include "actors/core/kv_ledger.hpp"
#include "actors/runtime/spawn.hpp"

namespace kvactor {

namespace {

struct block_manager_state {
  block_manager_state() = default;
  std::optional<kv_ledger> ledger;
};

block_manager_actor::behavior_type
block_manager_fn(block_manager_actor::stateful_pointer<block_manager_state> self,
                 int32_t num_blocks, int32_t block_size, bool prefix_caching) {
  self->state.ledger.emplace(num_blocks, block_size, prefix_caching);
  auto& ledger = *self->state.ledger;
  return {
    [&ledger](reserve_atom, const std::vector<reservation_entry>& entries) {
      return ledger.reserve(entries);
    },
    [&ledger](release_atom, seq_id id, int32_t num_computed) { ledger.release(id, num_computed); },
    [&ledger](forget_atom, seq_id id, int32_t num_computed) { ledger.forget(id, num_computed); },
    [&ledger](fork_atom, seq_id first, seq_id choice) { ledger.fork(first, choice); },
    [&ledger](blocks_atom, seq_id id) { return ledger.blocks_of(id); },
    [&ledger](free_swapped_atom, seq_id id) { ledger.release_swapped(id); },
    [&ledger](allocate_atom, seq_id id, int32_t num_wanted) {
      auto table = ledger.allocate_for_swap_in(id, num_wanted);
      return std::make_tuple(table.has_value(), table.value_or(std::vector<block_id>{}));
    },
    [&ledger](figures_atom) {
      return std::make_tuple(ledger.figures(), ledger.check_invariants());
    },
  };
}

} // namespace

block_manager_actor spawn_block_manager(caf::actor_system& sys, int32_t num_blocks,
                                        int32_t block_size, bool prefix_caching) {
  return sys.spawn(block_manager_fn, num_blocks, block_size, prefix_caching);
}

} // namespace kvactor
