// record_book: a record per choice of each request; its waiting ends when
// every one is resolved, at the deadline, or when no event came for the
// stall period.

#include "tools/stress/record_book.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace kvactor::stress {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using wait_result = record_book::wait_result;

done_event done_with(std::vector<int32_t> tokens) {
  done_event d;
  d.finish_reason = finish_reason::max_tokens;
  d.tokens = std::move(tokens);
  d.completion_tokens = static_cast<int32_t>(d.tokens.size());
  return d;
}

TEST(record_book, waiting_ends_when_every_request_is_resolved) {
  record_book book(2);
  book.sent(0);
  book.sent(1);
  std::thread events([&] {
    std::this_thread::sleep_for(20ms);
    book.done(0, done_with({5}));
    book.error(1, "overloaded");
  });
  EXPECT_EQ(book.wait_all_resolved(clock::now() + 60s, 60s), wait_result::resolved);
  events.join();
  EXPECT_EQ(book.num_resolved(), 2);
}

TEST(record_book, waiting_stops_when_no_event_comes_for_the_stall_period) {
  record_book book(2);
  book.sent(0);
  book.sent(1);
  std::thread events([&] { // request 0 makes progress for a while, 1 never
    for (int32_t i = 0; i < 20; ++i) {
      book.token(0, 0, i, 7);
      std::this_thread::sleep_for(10ms);
    }
  });
  EXPECT_EQ(book.wait_all_resolved(clock::now() + 600s, 1s), wait_result::stalled);
  EXPECT_EQ(book.num_tokens(), 20); // the tokens kept it waiting
  events.join();
  EXPECT_EQ(book.num_resolved(), 0);
}

TEST(record_book, waiting_stops_when_the_driver_abandons_it) {
  record_book book(1);
  book.sent(0);
  std::thread driver([&] {
    std::this_thread::sleep_for(20ms);
    book.abandon();
  });
  EXPECT_EQ(book.wait_all_resolved(clock::now() + 600s, 600s), wait_result::abandoned);
  driver.join();
  EXPECT_EQ(book.wait_all_resolved(clock::now() + 600s, 600s), wait_result::abandoned); // for good
}

TEST(record_book, waiting_stops_at_the_deadline) {
  record_book book(1);
  book.sent(0);
  EXPECT_EQ(book.wait_all_resolved(clock::now() + 50ms, 60s), wait_result::timed_out);
}

// A request of three choices: its admission and cancel reach each choice's
// record, its tokens and ends only their own; it is resolved when all are.
TEST(record_book, keeps_a_record_per_choice) {
  record_book book(std::vector<int32_t>{1, 3});
  EXPECT_EQ(book.num_records(), 4u);
  EXPECT_EQ(book.first_record(1), 1u);
  book.sent(1);
  book.accepted(1);
  book.cancel_sent(1);
  book.token(1, 2, 0, 9);
  auto end = done_with({9});
  end.choice = 2;
  book.done(1, end);
  EXPECT_TRUE(book.live(1));
  EXPECT_FALSE(book.resolved(1));
  EXPECT_EQ(book.num_cancels(), 1);
  end.choice = 0;
  book.done(1, end);
  EXPECT_TRUE(book.disconnect(1)); // choice 1 was still live
  EXPECT_TRUE(book.resolved(1));
  const auto records = book.records();
  EXPECT_FALSE(records[0].sent);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_TRUE(records[i].accepted && records[i].cancel_sent) << i;
    EXPECT_EQ(records[i].disconnected, i == 2) << i;
  }
  EXPECT_EQ(records[3].tokens, std::vector<int32_t>{9});
  EXPECT_TRUE(records[2].tokens.empty());
  EXPECT_EQ(book.num_resolved(), 3);
  EXPECT_THROW(book.token(1, 3, 0, 9), std::out_of_range);
}

} // namespace
} // namespace kvactor::stress
