#include "cluster/front_state.hpp"

#include <gtest/gtest.h>

namespace kvactor::cluster {
namespace {

// A worker whose prefix cache holds most of its pool still has room: a
// reservation evicts cached blocks.
TEST(front_links, counts_cached_blocks_as_available_to_the_router) {
  runtime_figures f;
  f.device_blocks_total = 100;
  f.device_blocks_free = 2;
  f.device_blocks_cached = 90;
  f.waiting = 3;
  const worker_load load = load_of(f);
  EXPECT_EQ(load.device_blocks_free, 92);
  EXPECT_EQ(load.waiting, 3);
}

} // namespace
} // namespace kvactor::cluster
