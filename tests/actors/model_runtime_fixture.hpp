#pragma once
// The fixture of the tests that serve the tiny model end to end
// (model_runtime*_test.cpp): a runtime from an engine_config, a sink that
// collects its events, and the calls the tests make of it.

#include "actors/runtime/spawn.hpp"
#include "kvactor/kvactor.hpp"
#include "test_sink.hpp"
#include "tiny_serving.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace kvactor::testing {

// A pool of 12 blocks of 4 tokens (4 KiB each, model_runtime_test.cpp)
// while each request grows past 9: preemptions.
inline engine_config small_pool(preemption_mode mode) {
  engine_config e;
  e.preemption = mode;
  e.block_size = 4;
  e.kv_cache_bytes = 12 * 4096;
  e.swap_bytes = 64 * 4096;
  return e;
}

class model_runtime : public ::testing::Test {
protected:
  // The tiny model, unless `e` names another.
  void start(engine_config e) {
    if (e.model_dir.empty())
      e.model_dir = model_dir().string();
    auto rt = spawn_runtime(sys_, e);
    ASSERT_TRUE(rt) << sys_.render(rt.error());
    rt_ = *rt;
    // NOTE: request ids start again in each runtime: a fresh collector.
    events_ = std::make_shared<collector>();
    sink_ = sys_.spawn(sink_fn, events_);
  }

  void TearDown() override { stop(); }

  // Shuts the runtime down (every actor ends); start() may follow.
  void stop() {
    if (!rt_)
      return;
    bool done = false;
    self_->request(rt_, caf::infinite, shutdown_atom::value)
      .receive([&](bool ok) { done = ok; },
               [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    EXPECT_TRUE(done);
    rt_ = nullptr;
  }

  request_id generate(std::vector<int32_t> prompt, int32_t max_tokens) {
    generate_request req;
    req.prompt_tokens = std::move(prompt);
    req.max_tokens = max_tokens;
    req.ignore_eos = true;
    return generate(req);
  }

  request_id generate(const generate_request& req) {
    admission a;
    self_->request(rt_, caf::infinite, generate_atom::value, req, sink_)
      .receive([&](const admission& x) { a = x; },
               [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    EXPECT_TRUE(a.ok()) << a.error_message;
    return a.id;
  }

  // Sends every request before it waits for their admissions, so that they
  // reach the scheduler together however loaded the machine is.
  std::vector<request_id> generate_all(const std::vector<generate_request>& reqs) {
    using handle =
      decltype(self_->request(rt_, caf::infinite, generate_atom::value, reqs.front(), sink_));
    std::vector<handle> sent;
    for (const auto& req : reqs)
      sent.push_back(self_->request(rt_, caf::infinite, generate_atom::value, req, sink_));
    std::vector<request_id> ids;
    for (auto& h : sent) {
      admission a;
      h.receive([&](const admission& x) { a = x; },
                [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
      EXPECT_TRUE(a.ok()) << a.error_message;
      ids.push_back(a.id);
    }
    return ids;
  }

  runtime_figures figures() {
    runtime_figures f;
    self_->request(rt_, caf::infinite, figures_atom::value)
      .receive([&](const runtime_figures& x) { f = x; },
               [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    return f;
  }

  void expect_idle() {
    const runtime_figures f = figures();
    EXPECT_EQ(f.device_blocks_used, 0);
    EXPECT_EQ(f.host_blocks_free, f.host_blocks_total);
    EXPECT_EQ(f.running + f.waiting + f.swapped, 0);
    EXPECT_THAT(f.broken_invariants, ::testing::IsEmpty());
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  caf::scoped_actor self_{sys_};
  std::shared_ptr<collector> events_ = std::make_shared<collector>();
  runtime_actor rt_;
  sink_actor sink_;
};

} // namespace kvactor::testing
