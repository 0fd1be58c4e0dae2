// record_book's waiting: it ends when every request is resolved, at the
// deadline, or when no event came for the stall period.

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
  d.finish_reason = "max_tokens";
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
      book.token(0, i, 7);
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

} // namespace
} // namespace kvactor::stress
