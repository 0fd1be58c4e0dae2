#pragma once
// A sink actor for tests that drive the runtime as a host application does:
// it collects every event per request, and tests wait for a request's done.

#include "kvactor/kvactor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

namespace kvactor::testing {

struct collector {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<request_id, std::vector<token_event>> tokens;
  std::map<request_id, std::vector<done_event>> dones;

  // The done event of `id`; fails the test if none comes within two minutes.
  done_event wait_done(request_id id) {
    std::unique_lock lock(mutex);
    const bool arrived =
      cv.wait_for(lock, std::chrono::minutes(2), [&] { return dones.contains(id); });
    EXPECT_TRUE(arrived) << "no done event for request " << id;
    return arrived ? dones[id].front() : done_event{};
  }

  // Waits for `id`'s first n token events; fails the test if they do not
  // come within two minutes.
  void wait_tokens(request_id id, std::size_t n) {
    std::unique_lock lock(mutex);
    const bool arrived =
      cv.wait_for(lock, std::chrono::minutes(2), [&] { return tokens[id].size() >= n; });
    EXPECT_TRUE(arrived) << "fewer than " << n << " tokens of request " << id;
  }

  // The done events of `id`'s n choices, by choice; fails the test unless
  // each choice ends exactly once within two minutes.
  std::vector<done_event> wait_choices(request_id id, int32_t n) {
    std::unique_lock lock(mutex);
    const bool arrived = cv.wait_for(lock, std::chrono::minutes(2),
                                     [&] { return dones[id].size() >= size_t(n); });
    EXPECT_TRUE(arrived) << "not every choice of request " << id << " ended";
    std::vector<done_event> by_choice(static_cast<size_t>(n));
    for (const done_event& d : dones[id]) {
      EXPECT_TRUE(d.choice >= 0 && d.choice < n) << "choice " << d.choice;
      if (d.choice >= 0 && d.choice < n) {
        EXPECT_EQ(by_choice[size_t(d.choice)].finish_reason, finish_reason::none)
          << "choice " << d.choice << " ended twice";
        by_choice[size_t(d.choice)] = d;
      }
    }
    return by_choice;
  }
};

inline sink_actor::behavior_type sink_fn(std::shared_ptr<collector> c) {
  return {
    [c](token_event& e) {
      std::lock_guard lock(c->mutex);
      c->tokens[e.id].push_back(std::move(e));
      c->cv.notify_all();
    },
    [c](done_event& e) {
      std::lock_guard lock(c->mutex);
      c->dones[e.id].push_back(std::move(e));
      c->cv.notify_all();
    },
  };
}

struct test_config : caf::actor_system_config {
  test_config() {
    kvactor::add_message_types(*this);
    set("scheduler.max-threads", 2);
  }
};

} // namespace kvactor::testing
