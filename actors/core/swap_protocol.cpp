#include "actors/core/swap_protocol.hpp"

namespace kvactor {

void swap_protocol::swap_out(seq_id id, const std::vector<block_id>& device_blocks,
                             swap_outbox& out) {
  if (auto copies = space_.swap_out(id, device_blocks))
    out.copy({id, swap_direction::out, std::move(*copies)});
  else
    out.swap_out_denied(id); // the host pool's room is this space's to say
}

void swap_protocol::copied_out(seq_id id, swap_outbox& out) {
  out.free_swapped(id); // before the scheduler may reuse them
  out.swapped_out(id);
}

void swap_protocol::swap_in(seq_id id, const std::vector<block_id>& table, swap_outbox& out) {
  out.copy({id, swap_direction::in, space_.swap_in(id, table)});
}

void swap_protocol::copied_in(seq_id id, swap_outbox& out) {
  space_.release(id);
  out.swapped_in(id);
}

} // namespace kvactor
