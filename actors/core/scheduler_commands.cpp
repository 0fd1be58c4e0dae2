#include "actors/core/scheduler_commands.hpp"

namespace kvactor {

void deliver(const scheduler_commands& commands, command_receivers& to) {
  for (const block_command& c : commands.blocks) {
    switch (c.kind) {
      case block_command::release: to.release(c.id, c.num_computed); break;
      case block_command::forget: to.forget(c.id, c.num_computed); break;
      case block_command::fork: to.fork(c.id, c.child); break;
    }
  }
  for (const swap_command& c : commands.swaps) {
    switch (c.kind) {
      case swap_command::swap_out: to.swap_out(c.id); break;
      case swap_command::swap_in: to.swap_in(c.id, c.num_blocks); break;
      case swap_command::drop_host: to.drop_host(c.id); break;
    }
  }
}

} // namespace kvactor
