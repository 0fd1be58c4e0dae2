// swap_actor: the swap_space behind messages. A swap-out asks the block
// manager for the sequence's blocks, reserves host blocks, has the executor
// copy them on the swap-out stream, and only when the copy is done frees the
// device blocks and tells the scheduler. A swap-in gets fresh device blocks,
// copies back on the swap-in stream, then frees the host blocks.

#include "actors/runtime/spawn.hpp"
#include "actors/core/pool_invariants.hpp"

namespace kvactor {

namespace {

struct swap_state {
  swap_state() = default;
  std::optional<swap_space> space;
  scheduler_actor sched; // where the reports go (attach_atom)
  jitter delays;         // of refused swap-ins (the executor delays the copies' ends)
};

swap_actor::behavior_type swap_fn(swap_actor::stateful_pointer<swap_state> self,
                                  int32_t num_host_blocks, block_manager_actor blocks,
                                  executor_actor executor, jitter_options delays) {
  self->state.space.emplace(num_host_blocks);
  self->state.delays = jitter(delays);
  auto& space = *self->state.space;
  // NOTE: the executor answers a swap with an error once the device has
  // failed; the scheduler has then ended every sequence, and nothing waits
  // for the swap.
  auto device_failed = [](const caf::error&) {};
  return {
    [=](attach_atom, scheduler_actor sched) { self->state.sched = std::move(sched); },
    [=, &space](swap_out_atom, seq_id id) {
      self->request(blocks, caf::infinite, blocks_atom::value, id)
        .then([=, &space](const std::vector<block_id>& device_blocks) {
          auto copies = space.swap_out(id, device_blocks);
          KVACTOR_ASSERT(copies.has_value(), "the scheduler checked the host pool's room");
          self->request(executor, caf::infinite, swap_order{id, swap_direction::out, *copies})
            .then(
              [=](bool) {
                self->send(blocks, free_swapped_atom::value,
                           id); // before the scheduler may reuse them
                self->send(self->state.sched, swapped_out_atom::value, id);
              },
              device_failed);
        });
    },
    [=, &space](swap_in_atom, seq_id id, int32_t num_blocks) {
      self->request(blocks, caf::infinite, allocate_atom::value, id, num_blocks)
        .then([=, &space](bool ok, const std::vector<block_id>& table) {
          if (!ok) {
            send_after(self->state.delays.next(), self->state.sched, swap_in_denied_atom::value,
                       id);
            return;
          }
          auto copies = space.swap_in(id, table);
          self->request(executor, caf::infinite, swap_order{id, swap_direction::in, copies})
            .then(
              [=, &space](bool) {
                space.release(id);
                self->send(self->state.sched, swapped_in_atom::value, id);
              },
              device_failed);
        });
    },
    [&space](drop_host_atom, seq_id id) { space.release(id); },
    [&space](figures_atom) {
      return host_figures{space.num_blocks(), space.num_free_blocks(), space.num_sequences(),
                          check_invariants(space)};
    },
  };
}

} // namespace

swap_actor spawn_swap(caf::actor_system& sys, int32_t num_host_blocks, block_manager_actor blocks,
                      executor_actor executor, jitter_options delays) {
  return sys.spawn(swap_fn, num_host_blocks, std::move(blocks), std::move(executor), delays);
}

} // namespace kvactor
