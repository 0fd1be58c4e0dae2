// swap_actor: swap_protocol behind messages. The block manager hands it each
// swap with its blocks; it reserves host blocks (or refuses a swap-out the
// pool has no room for), has the executor copy on the swap-out stream, and
// only when the copy is done has the device blocks freed and tells the
// scheduler; a swap-in copies back on the swap-in stream, then frees the
// host blocks. The actor only carries the protocol's messages.

#include "actors/core/pool_invariants.hpp"
#include "actors/core/swap_protocol.hpp"
#include "actors/runtime/spawn.hpp"

namespace kvactor {

namespace {

struct swap_state;
using swap_self = swap_actor::stateful_pointer<swap_state>;

// The protocol's messages as the actor sends them; a copy's answer runs the
// protocol's next step.
class actor_outbox final : public swap_outbox {
public:
  actor_outbox(swap_self self, block_manager_actor blocks, executor_actor executor)
    : self_(self), blocks_(std::move(blocks)), executor_(std::move(executor)) {}

  scheduler_actor sched; // where the reports go (attach_atom)

  void copy(swap_order order) override;
  void free_swapped(seq_id id) override;
  void swap_out_denied(seq_id id) override;
  void swapped_out(seq_id id) override;
  void swapped_in(seq_id id) override;

private:
  swap_self self_;
  block_manager_actor blocks_;
  executor_actor executor_;
};

struct swap_state {
  swap_state() = default;
  std::optional<swap_protocol> protocol;
  std::optional<actor_outbox> outbox;
};

void actor_outbox::copy(swap_order order) {
  const seq_id id = order.id;
  const swap_direction direction = order.direction;
  // NOTE: the executor answers a swap with an error once the device has
  // failed; the scheduler has then ended every sequence, and nothing waits
  // for the swap.
  self_->request(executor_, caf::infinite, std::move(order))
    .then(
      [this, id, direction](bool) {
        if (direction == swap_direction::out)
          self_->state.protocol->copied_out(id, *this);
        else
          self_->state.protocol->copied_in(id, *this);
      },
      [](const caf::error&) {});
}

void actor_outbox::free_swapped(seq_id id) {
  self_->send(blocks_, free_swapped_atom::value, id);
}

void actor_outbox::swap_out_denied(seq_id id) {
  self_->send(sched, swap_out_denied_atom::value, id);
}

void actor_outbox::swapped_out(seq_id id) {
  self_->send(sched, swapped_out_atom::value, id);
}

void actor_outbox::swapped_in(seq_id id) {
  self_->send(sched, swapped_in_atom::value, id);
}

swap_actor::behavior_type swap_fn(swap_self self, int32_t num_host_blocks,
                                  block_manager_actor blocks, executor_actor executor) {
  auto& protocol = self->state.protocol.emplace(num_host_blocks);
  auto& out = self->state.outbox.emplace(self, std::move(blocks), std::move(executor));
  return {
    [self, &out](attach_atom, scheduler_actor sched) {
      // NOTE: ends with the scheduler, as the block manager does: the two
      // hold each other's handle.
      self->monitor(sched);
      self->set_down_handler([self](const caf::down_msg&) { self->quit(); });
      out.sched = std::move(sched);
    },
    [&protocol, &out](swap_out_atom, seq_id id, const std::vector<block_id>& device_blocks) {
      protocol.swap_out(id, device_blocks, out);
    },
    [&protocol, &out](swap_in_atom, seq_id id, const std::vector<block_id>& table) {
      protocol.swap_in(id, table, out);
    },
    [&protocol](drop_host_atom, seq_id id) { protocol.drop_host(id); },
    [&protocol](figures_atom) {
      const swap_space& space = protocol.space();
      return host_figures{space.num_blocks(), space.num_free_blocks(), space.num_sequences(),
                          check_invariants(space)};
    },
  };
}

} // namespace

swap_actor spawn_swap(caf::actor_system& sys, int32_t num_host_blocks, block_manager_actor blocks,
                      executor_actor executor) {
  return sys.spawn(swap_fn, num_host_blocks, std::move(blocks), std::move(executor));
}

} // namespace kvactor
