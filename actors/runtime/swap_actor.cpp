// swap_actor: swap_protocol behind messages (its order: a swap-out asks the
// block manager for the sequence's blocks, reserves host blocks, has the
// executor copy them on the swap-out stream, and only when the copy is done
// has the device blocks freed and tells the scheduler; a swap-in gets fresh
// device blocks, copies back on the swap-in stream, then frees the host
// blocks). The actor only carries the protocol's messages.

#include "actors/core/pool_invariants.hpp"
#include "actors/core/swap_protocol.hpp"
#include "actors/runtime/spawn.hpp"

namespace kvactor {

namespace {

struct swap_state;
using swap_self = swap_actor::stateful_pointer<swap_state>;

// The protocol's messages as the actor sends them; each answer runs the
// protocol's next step.
class actor_outbox final : public swap_outbox {
public:
  actor_outbox(swap_self self, block_manager_actor blocks, executor_actor executor,
               jitter_options delays)
    : self_(self), blocks_(std::move(blocks)), executor_(std::move(executor)), delays_(delays) {}

  scheduler_actor sched; // where the reports go (attach_atom)

  void ask_blocks(seq_id id) override;
  void allocate(seq_id id, int32_t num_blocks) override;
  void free_swapped(seq_id id) override;
  void copy(swap_order order) override;
  void swapped_out(seq_id id) override;
  void swapped_in(seq_id id) override;
  void swap_in_denied(seq_id id) override;

private:
  swap_self self_;
  block_manager_actor blocks_;
  executor_actor executor_;
  jitter delays_;
};

struct swap_state {
  swap_state() = default;
  std::optional<swap_protocol> protocol;
  std::optional<actor_outbox> outbox;
};

void actor_outbox::ask_blocks(seq_id id) {
  self_->request(blocks_, caf::infinite, blocks_atom::value, id)
    .then([this, id](const std::vector<block_id>& device_blocks) {
      self_->state.protocol->blocks_known(id, device_blocks, *this);
    });
}

void actor_outbox::allocate(seq_id id, int32_t num_blocks) {
  self_->request(blocks_, caf::infinite, allocate_atom::value, id, num_blocks)
    .then([this, id](bool ok, const std::vector<block_id>& table) {
      self_->state.protocol->allocated(id, ok ? std::optional(table) : std::nullopt, *this);
    });
}

void actor_outbox::free_swapped(seq_id id) {
  self_->send(blocks_, free_swapped_atom::value, id);
}

void actor_outbox::swapped_out(seq_id id) {
  self_->send(sched, swapped_out_atom::value, id);
}

void actor_outbox::swapped_in(seq_id id) {
  self_->send(sched, swapped_in_atom::value, id);
}

// NOTE: delayed by the jitter of stress runs (the executor delays the
// copies' ends).
void actor_outbox::swap_in_denied(seq_id id) {
  send_after(delays_.next(), sched, swap_in_denied_atom::value, id);
}

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

swap_actor::behavior_type swap_fn(swap_self self, int32_t num_host_blocks,
                                  block_manager_actor blocks, executor_actor executor,
                                  jitter_options delays) {
  auto& protocol = self->state.protocol.emplace(num_host_blocks);
  auto& out = self->state.outbox.emplace(self, std::move(blocks), std::move(executor), delays);
  return {
    [&out](attach_atom, scheduler_actor sched) { out.sched = std::move(sched); },
    [&protocol, &out](swap_out_atom, seq_id id) { protocol.swap_out(id, out); },
    [&protocol, &out](swap_in_atom, seq_id id, int32_t num_blocks) {
      protocol.swap_in(id, num_blocks, out);
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
                      executor_actor executor, jitter_options delays) {
  return sys.spawn(swap_fn, num_host_blocks, std::move(blocks), std::move(executor), delays);
}

} // namespace kvactor
