// The actors together: scheduler, block manager, swap, executor and request
// actors over a stand-in model (test_runner), driven as a host application
// drives kvactor.

#include "actors/actors.hpp"
#include "test_sink.hpp"
#include "model/tiny/tiny_tokenizer.hpp"
#include "test_runner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <mutex>

namespace kvactor {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using namespace std::chrono_literals;
using testing::test_runner;

constexpr int32_t vocab = 512;

using testing::collector;
using testing::sink_fn;
using testing::test_config;

std::shared_ptr<const model::tokenizer> tiny_tokenizer() {
  model::tiny::tiny_options o;
  o.vocab_size = vocab;
  auto tok = model::tokenizer::build(model::tiny::make_tokenizer_spec(o), "tiny");
  EXPECT_TRUE(tok.has_value());
  return std::make_shared<const model::tokenizer>(std::move(*tok));
}

std::vector<int32_t> expected_output(std::vector<int32_t> history, int32_t max_tokens,
                                     uint64_t seed = 1) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < max_tokens; ++i) {
    out.push_back(test_runner::next_token(history, vocab, seed));
    history.push_back(out.back());
  }
  return out;
}

std::vector<int32_t> tokens(int n, int32_t first) {
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
    rt_ = spawn_runtime(sys_, runner_, {tok_, {vocab, 4096}}, std::move(config), max_waiting,
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

  // Idle: every block free or cached, every pool sound.
  void expect_idle() {
    auto f = figures();
    EXPECT_EQ(f.device_blocks_used, 0);
    EXPECT_EQ(f.host_blocks_free, f.host_blocks_total);
    EXPECT_EQ(f.running + f.waiting + f.swapped, 0);
    EXPECT_THAT(f.broken_invariants, IsEmpty());
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

TEST_F(runtime, serves_concurrent_requests_with_exact_outputs) {
  start(64, 16);
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 8; ++i) {
    auto prompt = tokens(5 + 3 * i, 10 * i + 5);
    auto a = generate(request_of(prompt, 6 + i));
    ASSERT_TRUE(a.ok()) << a.error_message;
    EXPECT_EQ(a.num_prompt_tokens, int32_t(prompt.size()));
    sent.emplace_back(a.id, prompt);
  }
  for (auto& [id, prompt] : sent) {
    auto done = events_->wait_done(id);
    const auto want = expected_output(prompt, int32_t(done.completion_tokens));
    EXPECT_EQ(done.finish_reason, "max_tokens");
    EXPECT_THAT(done.tokens, ElementsAreArray(want));
    std::lock_guard lock(events_->mutex);
    ASSERT_EQ(events_->tokens[id].size(), done.tokens.size());
    for (size_t k = 0; k < done.tokens.size(); ++k)
      EXPECT_EQ(events_->tokens[id][k].index, int32_t(k));
    EXPECT_EQ(events_->dones[id].size(), 1u);
  }
  expect_idle();
}

TEST_F(runtime, tokenizes_text_prompts_and_decodes_text) {
  start(64, 0);
  generate_request req;
  req.prompt = "the cat sat on the mat";
  req.max_tokens = 5;
  auto a = generate(req);
  ASSERT_TRUE(a.ok());
  auto prompt = tok_->encode(req.prompt);
  EXPECT_EQ(a.num_prompt_tokens, int32_t(prompt.size()));
  auto done = events_->wait_done(a.id);
  EXPECT_THAT(done.tokens, ElementsAreArray(expected_output({prompt.begin(), prompt.end()}, 5)));
  EXPECT_EQ(done.text, tok_->decode(std::vector<model::token_id>(done.tokens.begin(),
                                                                 done.tokens.end())));
}

TEST_F(runtime, refuses_bad_requests_with_the_field_at_fault) {
  start(8, 0);
  auto a = generate(request_of({1, 2, vocab}, 4));
  EXPECT_EQ(a.error_code, "invalid_field");
  EXPECT_THAT(a.error_message, ::testing::HasSubstr("outside the vocabulary"));
  auto b = generate(request_of({1, 2}, 0));
  EXPECT_EQ(b.error_code, "invalid_field");
  auto c = generate(request_of(tokens(40, 1), 4)); // 44 tokens: 11 blocks of 4 > 8
  EXPECT_EQ(c.error_code, "prompt_too_long");
  EXPECT_THAT(c.error_message, ::testing::HasSubstr("needs 11 KV blocks"));
  std::lock_guard lock(events_->mutex);
  EXPECT_TRUE(events_->dones.empty()); // refused requests get no events
}

class runtime_preemption : public runtime, public ::testing::WithParamInterface<preemption_mode> {};

TEST_P(runtime_preemption, keeps_outputs_identical_under_memory_pressure) {
  scheduler_config config;
  config.preemption = GetParam();
  start(16, 32, config);
  runner_->pause(); // all four run together
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 4; ++i) {
    auto prompt = tokens(9, 100 * i + 3);
    auto a = generate(request_of(prompt, 24)); // each grows to 9 of the 16 blocks
    ASSERT_TRUE(a.ok());
    sent.emplace_back(a.id, prompt);
  }
  runner_->resume();
  int preemptions = 0;
  for (auto& [id, prompt] : sent) {
    auto done = events_->wait_done(id);
    EXPECT_THAT(done.tokens, ElementsAreArray(expected_output(prompt, 24))) << "request " << id;
    preemptions += done.preemptions;
  }
  EXPECT_GT(preemptions, 0);
  EXPECT_EQ(figures().preemptions, preemptions);
  expect_idle();
}

INSTANTIATE_TEST_SUITE_P(modes, runtime_preemption,
                         ::testing::Values(preemption_mode::swap, preemption_mode::recompute));

// Completions of steps and swaps that come late, as on a loaded machine,
// with preemptions and cancels at every moment: every request ends once,
// the ones not cancelled exactly, and the idle runtime holds nothing.
TEST_F(runtime, late_completions_keep_outputs_exact_and_pools_clean) {
  start(16, 32, {}, 1024, {.max_ms = 3, .seed = 5});
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 12; ++i) {
    auto prompt = tokens(9, 40 * i + 3);
    auto a = generate(request_of(prompt, 24)); // four at a time fill the device pool
    ASSERT_TRUE(a.ok());
    sent.emplace_back(a.id, prompt);
    if (i % 3 == 1)
      caf::anon_send(rt_, preempt_atom::value, request_id{0}, true);
    if (i % 4 == 2)
      caf::anon_send(rt_, cancel_atom::value, sent[size_t(i) / 2].first);
  }
  for (int i = 0; i < 12; ++i) {
    auto done = events_->wait_done(sent[size_t(i)].first);
    if (done.finish_reason != "aborted") {
      EXPECT_THAT(done.tokens, ElementsAreArray(expected_output(sent[size_t(i)].second, 24)));
    }
  }
  EXPECT_GT(figures().preemptions, 0);
  expect_idle();
  std::lock_guard lock(events_->mutex);
  for (auto& [id, prompt] : sent)
    EXPECT_EQ(events_->dones[id].size(), 1u) << "request " << id;
}

// The slow tests: 1 ms per step and up to 800 tokens, so a cancel sent at
// once lands mid-generation by a wide margin.
constexpr int32_t long_generation = 800;

TEST_F(runtime, cancel_ends_a_request_once_as_aborted) {
  start(256, 16);
  runner_->set_step_time(1ms);
  auto a = generate(request_of(tokens(6, 1), long_generation));
  ASSERT_TRUE(a.ok());
  caf::anon_send(rt_, cancel_atom::value, a.id);
  auto done = events_->wait_done(a.id);
  EXPECT_EQ(done.finish_reason, "aborted");
  caf::anon_send(rt_, cancel_atom::value, a.id); // a second cancel is ignored
  expect_idle();
  std::lock_guard lock(events_->mutex);
  EXPECT_EQ(events_->dones[a.id].size(), 1u);
  EXPECT_EQ(events_->tokens[a.id].size(), done.tokens.size());
}

TEST_F(runtime, forced_preemptions_keep_outputs_exact) {
  start(64, 64);
  runner_->pause();
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 3; ++i) {
    auto prompt = tokens(7, 50 * i + 1);
    sent.emplace_back(generate(request_of(prompt, 40)).id, prompt);
  }
  for (int i = 0; i < 12; ++i) // while the first step is held: the next one preempts
    caf::anon_send(rt_, preempt_atom::value, request_id{0}, i % 2 == 0);
  runner_->resume();
  for (auto& [id, prompt] : sent)
    EXPECT_THAT(events_->wait_done(id).tokens, ElementsAreArray(expected_output(prompt, 40)));
  EXPECT_GE(figures().preemptions, 1);
  expect_idle();
}

// The block tables the executor rebuilds from the plans' changes, after a
// swap-in and after a recompute: exact block ids (free blocks are handed out
// from the front of the free list, released ones join its back).
TEST_F(runtime, a_swap_in_starts_the_executors_table_over) {
  start(16, 16);
  runner_->pause();
  const auto prompt = tokens(6, 20);
  auto a = generate(request_of(prompt, 4));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(runner_->wait_arrived(1)); // the prefill, held
  caf::anon_send(rt_, preempt_atom::value, a.id, true); // swapped out at the next step
  runner_->resume();
  auto done = events_->wait_done(a.id);
  EXPECT_THAT(done.tokens, ElementsAreArray(expected_output(prompt, 4)));
  EXPECT_EQ(done.preemptions, 1);
  // Prefilled into 0 and 1; swapped out (both go to the back of the free
  // list), swapped in into 2 and 3; position 8 adds block 4.
  EXPECT_THAT(runner_->tables_of(sequence_of(a.id, 0)),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3), ElementsAre(2, 3, 4)));
  expect_idle();
}

TEST_F(runtime, a_recompute_starts_the_executors_table_over) {
  start(16, 0);
  runner_->pause();
  const auto pa = tokens(6, 20), pb = tokens(6, 40);
  auto a = generate(request_of(pa, 4));
  ASSERT_TRUE(runner_->wait_arrived(1)); // a's prefill, held
  auto b = generate(request_of(pb, 3));
  runner_->allow(1);
  ASSERT_TRUE(runner_->wait_arrived(2)); // a's decode and b's prefill, held
  caf::anon_send(rt_, preempt_atom::value, b.id, false); // recomputed at the next step
  runner_->resume();
  EXPECT_THAT(events_->wait_done(a.id).tokens, ElementsAreArray(expected_output(pa, 4)));
  EXPECT_THAT(events_->wait_done(b.id).tokens, ElementsAreArray(expected_output(pb, 3)));
  // a: blocks 0 and 1, then 5 for position 8. b: blocks 2 and 3; released
  // with 6 tokens computed (block 2 cached, 3 to the back of the free list)
  // and prefilled again in the same step from the cached block 2 and a new 4.
  EXPECT_THAT(runner_->tables_of(sequence_of(a.id, 0)), ElementsAre(ElementsAre(0, 1), ElementsAre(0, 1, 5)));
  EXPECT_THAT(runner_->tables_of(sequence_of(b.id, 0)), ElementsAre(ElementsAre(2, 3), ElementsAre(2, 4)));
  expect_idle();
}

// n choices: the prompt is computed once; while the choices' first step
// runs, they hold its two full blocks together and a copy each of the
// partial third (the last to write keeps the original).
TEST_F(runtime, choices_share_the_prompts_blocks) {
  start(16, 0);
  runner_->pause();
  const auto prompt = tokens(10, 20);
  auto req = request_of(prompt, 3);
  req.n = 3;
  req.temperature = 1; // the stand-in then draws by the seed
  auto a = generate(req);
  ASSERT_TRUE(a.ok()) << a.error_message;
  ASSERT_TRUE(runner_->wait_arrived(1)); // 9 prompt tokens
  runner_->allow(1);
  ASSERT_TRUE(runner_->wait_arrived(2)); // each choice's token 9
  const runtime_figures f = figures();
  EXPECT_EQ(f.device_blocks_used, 3 + 2);
  EXPECT_EQ(f.running, 3);
  EXPECT_EQ(f.prompt_tokens, 10); // once, not per choice
  runner_->resume();
  const auto ends = events_->wait_choices(a.id, 3);
  for (int32_t c = 0; c < 3; ++c) {
    EXPECT_EQ(ends[c].finish_reason, "max_tokens") << "choice " << c;
    // Choice c samples with seed 1 + c: its tokens differ from the others',
    // and are wrong if a choice's write reached a block another one reads.
    EXPECT_THAT(ends[c].tokens, ElementsAreArray(expected_output(prompt, 3, 1 + c)))
      << "choice " << c;
    std::lock_guard lock(events_->mutex);
    EXPECT_EQ(std::ranges::count(events_->tokens[a.id], c, &token_event::choice), 3);
  }
  EXPECT_NE(ends[0].tokens, ends[1].tokens);
  expect_idle();
}

TEST_F(runtime, cancel_ends_every_choice_also_before_the_fork) {
  start(16, 0);
  runner_->pause();
  auto req = request_of(tokens(10, 20), 8);
  req.n = 4;
  auto a = generate(req);
  ASSERT_TRUE(runner_->wait_arrived(1)); // the shared prefill, held
  caf::anon_send(rt_, cancel_atom::value, a.id);
  runner_->resume();
  for (const done_event& d : events_->wait_choices(a.id, 4))
    EXPECT_EQ(d.finish_reason, "aborted") << "choice " << d.choice;
  expect_idle();
}

TEST_F(runtime, a_dead_sink_cancels_its_request) {
  start(256, 16);
  runner_->set_step_time(1ms);
  auto c = std::make_shared<collector>();
  auto doomed = sys_.spawn(sink_fn, c);
  auto a = generate(request_of(tokens(5, 1), long_generation), doomed);
  ASSERT_TRUE(a.ok());
  caf::anon_send_exit(doomed, caf::exit_reason::user_shutdown);
  // The request ends on its own; its blocks come back.
  for (int i = 0; i < 6000 && figures().requests_aborted == 0; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(figures().requests_aborted, 1);
  expect_idle();
}

TEST_F(runtime, a_dead_sink_cancels_every_choice) {
  start(256, 16);
  runner_->set_step_time(1ms);
  auto c = std::make_shared<collector>();
  auto doomed = sys_.spawn(sink_fn, c);
  auto req = request_of(tokens(9, 1), long_generation);
  req.n = 3;
  auto a = generate(req, doomed);
  ASSERT_TRUE(a.ok());
  {
    std::unique_lock lock(c->mutex); // mid-generation: every choice has a token
    ASSERT_TRUE(c->cv.wait_for(lock, 10s, [&] {
      std::set<int32_t> seen;
      for (const token_event& ev : c->tokens[a.id])
        seen.insert(ev.choice);
      return seen.size() == 3;
    }));
  }
  caf::anon_send_exit(doomed, caf::exit_reason::user_shutdown);
  for (int i = 0; i < 6000 && figures().requests_aborted < 3; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(figures().requests_aborted, 3); // each choice counts as a request
  expect_idle();
}

TEST_F(runtime, stop_sequences_end_the_text_before_them) {
  start(64, 0);
  auto prompt = tokens(6, 30);
  const auto want = expected_output(prompt, 12);
  const auto full = tok_->decode(std::vector<model::token_id>(want.begin(), want.end()));
  ASSERT_GE(full.size(), 6u);
  generate_request req = request_of(prompt, 12);
  req.stop = {full.substr(3, 3)};
  auto a = generate(req);
  auto done = events_->wait_done(a.id);
  EXPECT_EQ(done.finish_reason, "stop");
  EXPECT_EQ(done.text, full.substr(0, full.find(req.stop[0])));
  std::string streamed;
  std::lock_guard lock(events_->mutex);
  for (const auto& ev : events_->tokens[a.id])
    streamed += ev.text;
  EXPECT_EQ(streamed, done.text); // the stop sequence itself was never streamed
}

TEST_F(runtime, shutdown_ends_live_requests_as_aborted) {
  start(1024, 16);
  runner_->set_step_time(1ms);
  std::vector<request_id> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(generate(request_of(tokens(5, 7 * i), long_generation)).id);
  shutdown();
  for (request_id id : ids)
    EXPECT_EQ(events_->wait_done(id).finish_reason, "aborted");
}

} // namespace
} // namespace kvactor
