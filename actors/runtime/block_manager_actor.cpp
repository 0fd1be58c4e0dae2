// block_manager_actor: the kv_ledger behind messages. It hands each of the
// scheduler's swaps to the swap actor with its blocks (a swap-out's device
// blocks, a swap-in's fresh ones), or refuses a swap-in it has no blocks for.

#include "actors/core/kv_ledger.hpp"
#include "actors/runtime/spawn.hpp"

namespace kvactor {

namespace {

struct block_manager_state {
  block_manager_state() = default;
  std::optional<kv_ledger> ledger;
  swap_actor swap;       // where swaps go, and
  scheduler_actor sched; // where refused swap-ins are reported (attach_atom)
  jitter delays;         // of refused swap-ins (the executor delays the copies' ends)
};

block_manager_actor::behavior_type
block_manager_fn(block_manager_actor::stateful_pointer<block_manager_state> self,
                 int32_t num_blocks, int32_t block_size, bool prefix_caching,
                 jitter_options delays) {
  self->state.ledger.emplace(num_blocks, block_size, prefix_caching);
  self->state.delays = jitter(delays);
  auto& ledger = *self->state.ledger;
  auto& st = self->state;
  return {
    [self, &st](attach_atom, swap_actor swap, scheduler_actor sched) {
      // NOTE: this actor and the swap actor hold each other's handle; each
      // ends with the scheduler (a host may end the runtime with an exit
      // message rather than a shutdown), so neither keeps the other alive.
      self->monitor(sched);
      self->set_down_handler([self](const caf::down_msg&) { self->quit(); });
      st.swap = std::move(swap);
      st.sched = std::move(sched);
    },
    [&ledger](reserve_atom, const std::vector<reservation_entry>& entries) {
      return ledger.reserve(entries);
    },
    [&ledger](release_atom, seq_id id, int32_t num_computed) { ledger.release(id, num_computed); },
    [&ledger](forget_atom, seq_id id, int32_t num_computed) { ledger.forget(id, num_computed); },
    [&ledger](fork_atom, seq_id first, seq_id choice) { ledger.fork(first, choice); },
    [self, &st, &ledger](swap_out_atom, seq_id id) {
      self->send(st.swap, swap_out_atom::value, id, ledger.blocks_of(id));
    },
    [&ledger](free_swapped_atom, seq_id id) { ledger.release_swapped(id); },
    [self, &st, &ledger](swap_in_atom, seq_id id, int32_t num_wanted) {
      if (auto table = ledger.allocate_for_swap_in(id, num_wanted))
        self->send(st.swap, swap_in_atom::value, id, std::move(*table));
      else
        send_after(st.delays.next(), st.sched, swap_in_denied_atom::value, id);
    },
    [&ledger](figures_atom) {
      return std::make_tuple(ledger.figures(), ledger.check_invariants());
    },
  };
}

} // namespace

block_manager_actor spawn_block_manager(caf::actor_system& sys, int32_t num_blocks,
                                        int32_t block_size, bool prefix_caching,
                                        jitter_options delays) {
  return sys.spawn(block_manager_fn, num_blocks, block_size, prefix_caching, delays);
}

} // namespace kvactor
