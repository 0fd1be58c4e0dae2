// The swap actor's order (swap_protocol): what each step sends, in order,
// and what it does to the host pool.

#include "actors/core/swap_protocol.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvactor {
namespace {

using ::testing::ElementsAre;

// Writes down each message as "verb id".
struct recording_outbox final : swap_outbox {
  std::vector<std::string> sent;
  std::vector<swap_order> copies;
  void note(const char* verb, seq_id id) {
    std::string line(verb);
    sent.push_back(line.append(" ").append(std::to_string(id)));
  }
  void copy(swap_order order) override {
    note(order.direction == swap_direction::out ? "copy_out" : "copy_in", order.id);
    copies.push_back(std::move(order));
  }
  void free_swapped(seq_id id) override { note("free_swapped", id); }
  void swap_out_denied(seq_id id) override { note("swap_out_denied", id); }
  void swapped_out(seq_id id) override { note("swapped_out", id); }
  void swapped_in(seq_id id) override { note("swapped_in", id); }
};

TEST(swap_protocol, a_swap_out_frees_the_device_blocks_before_it_reports) {
  swap_protocol p(8);
  recording_outbox out;
  p.swap_out(7, {4, 2, 9}, out);
  EXPECT_EQ(p.space().num_free_blocks(), 5);
  ASSERT_EQ(out.copies.size(), 1u);
  ASSERT_EQ(out.copies[0].copies.size(), 3u);
  EXPECT_EQ(out.copies[0].copies[1].src, 2); // in table order, device -> host
  EXPECT_EQ(out.copies[0].copies[1].dst, p.space().host_blocks(7)[1]);
  EXPECT_THAT(out.sent, ElementsAre("copy_out 7")); // nothing else until the copy is done
  p.copied_out(7, out);
  // The scheduler may hand the freed blocks out at once: the block manager
  // hears first.
  EXPECT_THAT(out.sent, ElementsAre("copy_out 7", "free_swapped 7", "swapped_out 7"));
  EXPECT_TRUE(p.space().holds(7));
}

TEST(swap_protocol, a_swap_in_copies_back_then_frees_the_host_blocks) {
  swap_protocol p(8);
  recording_outbox out;
  p.swap_out(7, {4, 2}, out);
  p.copied_out(7, out);
  out.sent.clear();
  const auto held = p.space().host_blocks(7);
  const std::vector<block_id> host(held.begin(), held.end());
  p.swap_in(7, {11, 12}, out);
  ASSERT_EQ(out.copies.size(), 2u);
  EXPECT_EQ(out.copies[1].copies[0].src, host[0]); // host -> device, in table order
  EXPECT_EQ(out.copies[1].copies[0].dst, 11);
  EXPECT_TRUE(p.space().holds(7)); // until the copy is done
  p.copied_in(7, out);
  EXPECT_THAT(out.sent, ElementsAre("copy_in 7", "swapped_in 7"));
  EXPECT_FALSE(p.space().holds(7));
  EXPECT_EQ(p.space().num_free_blocks(), 8);
}

// The host pool's room is the swap space's alone: a swap-out it cannot
// hold whole is refused, nothing reserved, and one that fits still goes.
TEST(swap_protocol, a_swap_out_the_host_pool_has_no_room_for_is_denied) {
  swap_protocol p(4);
  recording_outbox out;
  p.swap_out(1, {5, 6, 7}, out);
  p.swap_out(2, {8, 9}, out);
  EXPECT_THAT(out.sent, ElementsAre("copy_out 1", "swap_out_denied 2"));
  EXPECT_FALSE(p.space().holds(2));
  EXPECT_EQ(p.space().num_free_blocks(), 1);
  p.swap_out(3, {10}, out);
  EXPECT_THAT(out.sent, ElementsAre("copy_out 1", "swap_out_denied 2", "copy_out 3"));
  EXPECT_EQ(p.space().num_free_blocks(), 0);
}

TEST(swap_protocol, an_ended_sequence_drops_its_host_blocks) {
  swap_protocol p(4);
  recording_outbox out;
  p.swap_out(3, {1, 2, 3}, out);
  p.copied_out(3, out);
  p.drop_host(3);
  EXPECT_FALSE(p.space().holds(3));
  EXPECT_EQ(p.space().num_free_blocks(), 4);
}

} // namespace
} // namespace kvactor
