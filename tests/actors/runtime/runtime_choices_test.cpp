// Requests of several choices through the runtime's actors over the
// stand-in model: shared prompt blocks, each choice's own seed, every choice
// ended by a cancel or a dead sink.

#include "runtime_fixture.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace kvactor {
namespace {

using ::testing::ElementsAreArray;
using namespace std::chrono_literals;
using namespace kvactor::testing;

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
    EXPECT_EQ(ends[c].finish_reason, finish_reason::max_tokens) << "choice " << c;
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

// Choices that could never run together (2 shared blocks + 8 x 3 > 16) are
// refused at admission, while another request's step is held, and nothing
// else notices: no preemption, the other requests served.
TEST_F(runtime, refuses_choices_that_could_never_fit_together_at_once) {
  start(16, 0);
  runner_->pause();
  const auto prompt = tokens(10, 20), other = tokens(10, 200);
  auto first = generate(request_of(other, 6)); // 4 blocks
  ASSERT_TRUE(first.ok()) << first.error_message;
  ASSERT_TRUE(runner_->wait_arrived(1));
  auto req = request_of(prompt, 8);
  req.n = 8;
  auto refused = generate(req);
  EXPECT_EQ(refused.error_code, errc::prompt_too_long);
  EXPECT_THAT(refused.error_message,
              ::testing::HasSubstr("needs 26 KV blocks of 4 tokens (104 tokens)"));
  EXPECT_THAT(refused.error_message, ::testing::HasSubstr("device pool has 16 (64 tokens)"));
  req.n = 3; // 2 + 3 x 3 blocks, beside the first's 4
  auto fits = generate(req);
  ASSERT_TRUE(fits.ok()) << fits.error_message;
  runner_->resume();
  EXPECT_THAT(events_->wait_done(first.id).tokens, ElementsAreArray(expected_output(other, 6)));
  for (const done_event& d : events_->wait_choices(fits.id, 3))
    EXPECT_EQ(d.finish_reason, finish_reason::max_tokens) << "choice " << d.choice;
  EXPECT_EQ(figures().preemptions, 0);
  {
    std::lock_guard lock(events_->mutex);
    EXPECT_FALSE(events_->dones.contains(refused.id)); // refused requests get no events
  }
  expect_idle();
}

TEST_F(runtime, cancel_ends_every_choice_also_before_the_fork) {
  start(16, 0);
  runner_->pause();
  auto req = request_of(tokens(10, 20), 8);
  req.n = 4;
  auto a = generate(req);
  ASSERT_TRUE(runner_->wait_arrived(1)); // the shared prefill, held
  cancel(a.id); // the scheduler has it before the prefill ends: the choices
  runner_->resume(); // could otherwise reach max_tokens first
  for (const done_event& d : events_->wait_choices(a.id, 4))
    EXPECT_EQ(d.finish_reason, finish_reason::aborted) << "choice " << d.choice;
  expect_idle();
}

TEST_F(runtime, a_dead_sink_cancels_every_choice) {
  start(640, 16); // the choices fit together: 2 shared blocks + 3 x 200

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

} // namespace
} // namespace kvactor
