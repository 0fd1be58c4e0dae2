#pragma once
// The runtime's actors over the stand-in model (test_runner), driven as a
// host application drives kvactor: the fixture of runtime_test and
// runtime_choices_test.

#include "actors/runtime/spawn.hpp"
#include "model/tiny/tiny_tokenizer.hpp"
#include "test_runner.hpp"
#include "test_sink.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace kvactor::testing {

inline constexpr int32_t vocab = 512;

inline std::shared_ptr<const model::tokenizer> tiny_tokenizer() {
  model::tiny::tiny_options o;
  o.vocab_size = vocab;
  auto tok = model::tokenizer::build(model::tiny::make_tokenizer_spec(o), "tiny");
  EXPECT_TRUE(tok.has_value());
  return std::make_shared<const model::tokenizer>(std::move(*tok));
}

inline std::vector<int32_t> expected_output(std::vector<int32_t> history, int32_t max_tokens,
                                     uint64_t seed = 1) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < max_tokens; ++i) {
    out.push_back(test_runner::next_token(history, vocab, seed));
    history.push_back(out.back());
  }
  return out;
}

inline std::vector<int32_t> tokens(int n, int32_t first) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = first + i;
  return v;
}

class runtime : public ::testing::Test {
protected:
  void start(int32_t device_blocks, int32_t host_blocks, scheduler_config config = {},
             int32_t max_waiting = 1024, jitter_options delays = {}) {
    tok_ = tiny_tokenizer();
    runner_ = std::make_shared<test_runner>(device_blocks, host_blocks, 4, vocab);
    rt_ = spawn_actors(sys_, runner_, {tok_, {vocab, 4096}}, std::move(config), max_waiting,
                        delays);
    sink_ = sys_.spawn(sink_fn, events_);
  }

  void TearDown() override {
    if (rt_)
      shutdown();
  }

  admission generate(generate_request req, sink_actor sink = {}) {
    admission a;
    self_->request(rt_, caf::infinite, generate_atom::value, std::move(req), sink ? sink : sink_)
      .receive([&](const admission& x) { a = x; },
               [&](const caf::error& e) { ADD_FAILURE() << self_->system().render(e); });
    return a;
  }

  generate_request request_of(std::vector<int32_t> prompt, int32_t max_tokens) {
    generate_request req;
    req.prompt_tokens = std::move(prompt);
    req.max_tokens = max_tokens;
    return req;
  }

  runtime_figures figures() {
    runtime_figures f;
    self_->request(rt_, caf::infinite, figures_atom::value)
      .receive([&](const runtime_figures& x) { f = x; },
               [&](const caf::error& e) { ADD_FAILURE() << self_->system().render(e); });
    return f;
  }

  // Forces a preemption (of the request, or by the scheduler's choice for
  // id 0) and returns once the scheduler has it: the runtime actor passes it
  // on before it asks the scheduler for the figures asked after it.
  void preempt(request_id id, bool by_swap) {
    self_->send(rt_, preempt_atom::value, id, by_swap);
    figures();
  }

  // Cancels the request and returns once the scheduler has the cancel, as
  // preempt() does.
  void cancel(request_id id) {
    self_->send(rt_, cancel_atom::value, id);
    figures();
  }

  // Idle: every block free or cached, every pool sound.
  void expect_idle() {
    auto f = figures();
    EXPECT_EQ(f.device_blocks_used, 0);
    EXPECT_EQ(f.host_blocks_free, f.host_blocks_total);
    EXPECT_EQ(f.running + f.waiting + f.swapped, 0);
    EXPECT_THAT(f.broken_invariants, ::testing::IsEmpty());
  }

  void shutdown() {
    bool done = false;
    self_->request(rt_, caf::infinite, shutdown_atom::value)
      .receive([&](bool ok) { done = ok; },
               [&](const caf::error& e) { ADD_FAILURE() << self_->system().render(e); });
    EXPECT_TRUE(done);
    rt_ = nullptr;
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  caf::scoped_actor self_{sys_};
  std::shared_ptr<const model::tokenizer> tok_;
  std::shared_ptr<test_runner> runner_;
  std::shared_ptr<collector> events_ = std::make_shared<collector>();
  runtime_actor rt_;
  sink_actor sink_;
};

// Long enough that a cancel lands mid-generation.
inline constexpr int32_t long_generation = 800;

} // namespace kvactor::testing
