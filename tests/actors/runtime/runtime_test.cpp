// The actors together: scheduler, block manager, swap, executor and request
// actors over a stand-in model (test_runner), driven as a host application
// drives kvactor.

#include "runtime_fixture.hpp"

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
using namespace kvactor::testing;


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
    EXPECT_EQ(done.finish_reason, finish_reason::max_tokens);
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
  EXPECT_EQ(a.error_code, errc::invalid_field);
  EXPECT_THAT(a.error_message, ::testing::HasSubstr("outside the vocabulary"));
  auto b = generate(request_of({1, 2}, 0));
  EXPECT_EQ(b.error_code, errc::invalid_field);
  auto c = generate(request_of(tokens(40, 1), 4)); // 44 tokens: 11 blocks of 4 > 8
  EXPECT_EQ(c.error_code, errc::prompt_too_long);
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
    if (done.finish_reason != finish_reason::aborted) {
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
TEST_F(runtime, cancel_ends_a_request_once_as_aborted) {
  start(256, 16);
  runner_->set_step_time(1ms);
  auto a = generate(request_of(tokens(6, 1), long_generation));
  ASSERT_TRUE(a.ok());
  caf::anon_send(rt_, cancel_atom::value, a.id);
  auto done = events_->wait_done(a.id);
  EXPECT_EQ(done.finish_reason, finish_reason::aborted);
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
    preempt(request_id{0}, i % 2 == 0);
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
  preempt(a.id, true); // swapped out at the next step
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
  preempt(b.id, false); // recomputed at the next step
  runner_->resume();
  EXPECT_THAT(events_->wait_done(a.id).tokens, ElementsAreArray(expected_output(pa, 4)));
  EXPECT_THAT(events_->wait_done(b.id).tokens, ElementsAreArray(expected_output(pb, 3)));
  // a: blocks 0 and 1, then 5 for position 8. b: blocks 2 and 3; released
  // with 6 tokens computed (block 2 cached, 3 to the back of the free list)
  // and prefilled again in the same step from the cached block 2 and a new 4.
  EXPECT_THAT(runner_->tables_of(sequence_of(a.id, 0)),
              ElementsAre(ElementsAre(0, 1), ElementsAre(0, 1, 5)));
  EXPECT_THAT(runner_->tables_of(sequence_of(b.id, 0)),
              ElementsAre(ElementsAre(2, 3), ElementsAre(2, 4)));
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
  EXPECT_EQ(done.finish_reason, finish_reason::stop);
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
    EXPECT_EQ(events_->wait_done(id).finish_reason, finish_reason::aborted);
}

// A host may end the runtime with an exit message instead of a shutdown
// (kvactor-serve does on a bad generation_config.json): every actor ends
// with it, also the block manager and the swap actor, which hold each
// other's handle; an actor left running would keep the actor system (and
// the process) from ending.
TEST_F(runtime, an_exit_message_ends_every_actor) {
  const size_t before = sys_.registry().running();
  start(16, 16);
  preempt(request_id{0}, true); // nothing to preempt: a round trip once all are up
  EXPECT_GT(sys_.registry().running(), before + 1);
  caf::anon_send_exit(rt_, caf::exit_reason::user_shutdown);
  rt_ = nullptr;
  for (int i = 0; i < 1000 && sys_.registry().running() > before + 1; ++i) // the sink stays
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(sys_.registry().running(), before + 1);
}

// A device fault mid-generation (the 5th step never completes, as after a
// CUDA kernel's illegal address): every live choice ends at once with the
// fault, a new request is refused with it, and the runtime still shuts down.
TEST_F(runtime, a_device_fault_ends_every_request_with_the_fault_and_refuses_new_ones) {
  const std::string fault = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  start(1024, 16);
  runner_->set_step_time(1ms);
  runner_->fail_at_step(5, fault);
  // NOTE: held until every request is admitted: under load the fault could
  // otherwise come first, and a request sent after it is refused.
  runner_->pause();
  std::vector<request_id> ids;
  for (int i = 0; i < 3; ++i) {
    const admission a = generate(request_of(tokens(5, 7 * i), long_generation));
    ASSERT_TRUE(a.ok()) << a.error_message;
    ids.push_back(a.id);
  }
  auto three = request_of(tokens(9, 50), long_generation);
  three.n = 3;
  three.temperature = 1;
  const admission a_forked = generate(three);
  ASSERT_TRUE(a_forked.ok()) << a_forked.error_message;
  const request_id forked = a_forked.id;
  runner_->resume();
  for (request_id id : ids) {
    const done_event done = events_->wait_done(id);
    EXPECT_EQ(done.finish_reason, finish_reason::error);
    EXPECT_EQ(done.error_code, errc::device_unusable);
    EXPECT_EQ(done.error_message, fault);
  }
  for (const done_event& done : events_->wait_choices(forked, 3)) {
    EXPECT_EQ(done.finish_reason, finish_reason::error);
    EXPECT_EQ(done.error_message, fault);
  }
  const admission refused = generate(request_of(tokens(5, 99), 4));
  EXPECT_EQ(refused.error_code, errc::device_unusable);
  EXPECT_EQ(refused.error_message, "the device failed: " + fault);
  shutdown();
  std::lock_guard lock(events_->mutex);
  for (request_id id : ids)
    EXPECT_EQ(events_->dones[id].size(), 1u) << "request " << id;
}

} // namespace
} // namespace kvactor
