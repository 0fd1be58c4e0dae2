#include "tools/stress/server_stats.hpp"

#include "net/line_protocol.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor::stress {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The figures both stats lines below carry.
void expect_the_figures(const std::optional<end_state>& s) {
  ASSERT_TRUE(s);
  EXPECT_EQ(s->device_blocks_total, 64);
  EXPECT_EQ(s->device_blocks_used, 3);
  EXPECT_EQ(s->host_blocks_total, 16);
  EXPECT_EQ(s->host_blocks_free, 12);
  EXPECT_EQ(s->running, 2);
  EXPECT_EQ(s->waiting, 5);
  EXPECT_EQ(s->swapped, 1);
  EXPECT_EQ(s->preemptions, 7);
  EXPECT_EQ(s->swap_outs_refused, 2);
  EXPECT_TRUE(s->broken_invariants.empty());
}

TEST(server_stats, reads_the_pools_and_queues_of_a_stats_line) {
  expect_the_figures(
    parse_stats(R"({"event":"stats","device_blocks_total":64,"device_blocks_in_use":3,)"
                R"("host_blocks_total":16,"host_blocks_free":12,"running":2,"waiting":5,)"
                R"("swapped":1,"preemptions":7,"swap_outs_refused":2,"invariants_ok":true,)"
                R"("tokens_per_s":1.5})"));
}

// The stats line as the server writes it: every field the stress tool
// reads, by the name the line protocol gives it.
TEST(server_stats, reads_the_line_the_server_writes) {
  runtime_figures f;
  f.device_blocks_total = 64;
  f.device_blocks_used = 3;
  f.host_blocks_total = 16;
  f.host_blocks_free = 12;
  f.running = 2;
  f.waiting = 5;
  f.swapped = 1;
  f.preemptions = 7;
  f.preemptions_by_swap = 4;
  f.swap_outs_refused = 2;
  expect_the_figures(parse_stats(net::format_stats(f)));
}

TEST(server_stats, says_when_the_server_reports_broken_invariants) {
  auto s = parse_stats(R"({"event":"stats","invariants_ok":false})");
  ASSERT_TRUE(s);
  EXPECT_THAT(s->broken_invariants, ElementsAre(HasSubstr("invariants_ok false")));
}

TEST(server_stats, other_lines_are_not_stats) {
  EXPECT_FALSE(parse_stats(R"({"event":"done","id":"r1"})"));
  EXPECT_FALSE(parse_stats("not json"));
  EXPECT_FALSE(parse_stats("[1,2]"));
}

} // namespace
} // namespace kvactor::stress
