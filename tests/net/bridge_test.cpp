// The bridge actor between a connection and the runtime: which lines it
// hands its session, in which order, for each event of the runtime, in front
// of a fake runtime (fake_runtime.hpp) that records what the bridge sends it.

#include "net/bridge.hpp"

#include "fake_runtime.hpp"
#include "net/client.hpp"
#include "test_runtime.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>

namespace kvactor::net {
namespace {

constexpr request_id first_id = fake_runtime::first_id;

// The lines a bridge emits, for the test thread to wait on.
class line_queue {
public:
  void push(std::string line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
    changed_.notify_all();
  }
  // The next line; "<none>" when none comes within 10 s.
  std::string next() {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, std::chrono::seconds(10), [&] { return !lines_.empty(); }))
      return "<none>";
    std::string line = std::move(lines_.front());
    lines_.pop_front();
    return line;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> lines_;
};

generate_op op(std::string id, std::vector<int32_t> prompt) {
  generate_op g{std::move(id), {}};
  g.request.prompt_tokens = std::move(prompt);
  g.request.max_tokens = 3;
  return g;
}

generate_op op_with_prompt(std::string id, std::string prompt) {
  generate_op g{std::move(id), {}};
  g.request.prompt = std::move(prompt);
  return g;
}

done_event done_of(request_id id, std::vector<int32_t> tokens, std::string reason) {
  done_event d;
  d.id = id;
  d.finish_reason = finish_reason_of(reason).value();
  d.tokens = std::move(tokens);
  d.text = "some text";
  d.completion_tokens = static_cast<int32_t>(d.tokens.size());
  return d;
}

class bridge_test : public ::testing::Test {
protected:
  bridge_test() {
    bridge_ = spawn_bridge(sys_, rt_.handle(),
                           [lines = lines_](std::string line) { lines->push(std::move(line)); });
  }
  ~bridge_test() override { caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown); }

  template <class T>
  void send(T message) {
    caf::anon_send(bridge_, std::move(message));
  }
  std::string next_line() { return lines_->next(); }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  fake_runtime rt_{sys_};
  std::shared_ptr<line_queue> lines_ = std::make_shared<line_queue>();
  bridge_actor bridge_;
};

TEST_F(bridge_test, streams_accepted_tokens_and_done_under_the_client_id) {
  send(op("a", {5, 6, 7}));
  EXPECT_EQ(next_line(), format_accepted("a", 3));
  ASSERT_EQ(rt_.generates().size(), 1u);
  EXPECT_EQ(rt_.generates()[0].request.prompt_tokens, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(rt_.generates()[0].request.max_tokens, 3);

  rt_.send_token(first_id, 0, 40, "x");
  rt_.send_token(first_id, 1, 41, "");
  rt_.send_done(done_of(first_id, {40, 41}, "max_tokens"));
  EXPECT_EQ(next_line(), format_token("a", {first_id, 0, 40, "x"}));
  EXPECT_EQ(next_line(), format_token("a", {first_id, 1, 41, ""}));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {40, 41}, "max_tokens")));
}

// A request of n choices: events name their choice, and the id stays live
// until the last choice's done.
TEST_F(bridge_test, names_each_choice_and_ends_with_the_last) {
  auto two = op("a", {1});
  two.request.n = 2;
  send(two);
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  token_event t{first_id, 0, 8, "x"};
  t.choice = 1;
  rt_.send_token(t);
  done_event second = done_of(first_id, {8}, "eos");
  second.choice = 1;
  rt_.send_done(second);
  send(op("a", {2})); // still live: one choice has not ended
  const std::string token_line = next_line();
  EXPECT_EQ(token_line, format_token("a", t, 2));
  EXPECT_NE(token_line.find(R"("choice":1)"), std::string::npos) << token_line;
  EXPECT_EQ(next_line(), format_done("a", second, 2));
  EXPECT_EQ(next_line(), format_error({"duplicate_id", "a", "id 'a' is already live"}));
  rt_.send_done(done_of(first_id, {}, "eos"));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {}, "eos"), 2));
  send(op("a", {3})); // ended: the id is free again
  EXPECT_EQ(next_line(), format_accepted("a", 1));
}

TEST_F(bridge_test, routes_interleaved_events_to_their_client_ids) {
  send(op("a", {1}));
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  send(op("b", {2, 3}));
  EXPECT_EQ(next_line(), format_accepted("b", 2));
  rt_.send_token(first_id + 1, 0, 9, "b0");
  rt_.send_token(first_id, 0, 8, "a0");
  rt_.send_done(done_of(first_id + 1, {9}, "eos"));
  rt_.send_token(first_id, 1, 7, "a1");
  EXPECT_EQ(next_line(), format_token("b", {first_id + 1, 0, 9, "b0"}));
  EXPECT_EQ(next_line(), format_token("a", {first_id, 0, 8, "a0"}));
  EXPECT_EQ(next_line(), format_done("b", done_of(first_id + 1, {9}, "eos")));
  EXPECT_EQ(next_line(), format_token("a", {first_id, 1, 7, "a1"}));
}

TEST_F(bridge_test, drops_events_of_requests_it_does_not_know) {
  send(op("a", {1}));
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  send(token_event{999, 0, 1, "stray"});
  send(done_event{999, finish_reason::eos, {1}, "stray"});
  rt_.send_done(done_of(first_id, {3}, "eos"));
  rt_.send_token(first_id, 1, 4, "late"); // after its done
  send(op("b", {2}));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {3}, "eos")));
  EXPECT_EQ(next_line(), format_accepted("b", 1));
}

TEST_F(bridge_test, passes_a_refusal_on_as_an_error_line_and_frees_the_id) {
  send(op_with_prompt("a", "refuse:prompt_too_long"));
  EXPECT_EQ(next_line(), format_error({"prompt_too_long", "a", "refused by the fake runtime"}));
  send(op("a", {1, 2}));
  EXPECT_EQ(next_line(), format_accepted("a", 2));
}

TEST_F(bridge_test, reports_a_runtime_error_as_overloaded) {
  send(op_with_prompt("a", "fail"));
  auto e = parse_event(next_line());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->event, "error");
  EXPECT_EQ(e->code, "overloaded");
  EXPECT_EQ(e->id, "a");
  send(op("a", {1})); // the id is free again
  EXPECT_EQ(next_line(), format_accepted("a", 1));
}

// One connection's flood stays at the bridge: past the connection's live
// choices, a request is refused without reaching the runtime.
TEST_F(bridge_test, refuses_choices_past_the_connections_limit_until_some_end) {
  auto lines = std::make_shared<line_queue>();
  auto bounded = spawn_bridge(
    sys_, rt_.handle(), [lines](std::string line) { lines->push(std::move(line)); }, 3);
  auto two = op("a", {1});
  two.request.n = 2;
  caf::anon_send(bounded, two);
  EXPECT_EQ(lines->next(), format_accepted("a", 1));
  auto b = two;
  b.id = "b";
  caf::anon_send(bounded, b);
  auto refused = parse_event(lines->next());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, "overloaded");
  EXPECT_EQ(refused->id, "b");
  EXPECT_EQ(rt_.generates().size(), 1u); // b never reached the runtime
  caf::anon_send(bounded, op_with_prompt("r", "refuse:prompt_too_long")); // 3 of 3 while pending
  EXPECT_EQ(lines->next(), format_error({"prompt_too_long", "r", "refused by the fake runtime"}));
  caf::anon_send(bounded, op("c", {2})); // the refusal gave its choice back
  EXPECT_EQ(lines->next(), format_accepted("c", 1));
  for (int32_t choice : {0, 1}) {
    done_event d = done_of(first_id, {}, "eos");
    d.choice = choice;
    rt_.send_done(d);
    lines->next();
  }
  caf::anon_send(bounded, b); // a has ended: room for b's two
  EXPECT_EQ(lines->next(), format_accepted("b", 1));
  caf::anon_send_exit(bounded, caf::exit_reason::user_shutdown);
}

TEST_F(bridge_test, refuses_an_id_that_is_live_pending_or_accepted) {
  rt_.hold();
  send(op("a", {1}));
  ASSERT_TRUE(rt_.wait_generates(1));
  send(op("a", {2})); // while pending
  EXPECT_EQ(next_line(), format_error({"duplicate_id", "a", "id 'a' is already live"}));
  rt_.admit_held();
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  send(op("a", {3})); // while accepted
  EXPECT_EQ(next_line(), format_error({"duplicate_id", "a", "id 'a' is already live"}));
  rt_.send_done(done_of(first_id, {}, "eos"));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {}, "eos")));
  send(op("a", {4})); // ended: free again
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  // Neither duplicate reached the runtime.
  ASSERT_EQ(rt_.generates().size(), 2u);
  EXPECT_EQ(rt_.generates()[1].id, first_id + 1);
  EXPECT_EQ(rt_.generates()[1].request.prompt_tokens, std::vector<int32_t>{4});
}

TEST_F(bridge_test, answers_a_cancel_of_an_unknown_or_ended_id) {
  send(cancel_op{"ghost"});
  EXPECT_EQ(next_line(), format_error({"unknown_id", "ghost", "no live request with id 'ghost'"}));
  send(op("a", {1}));
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  rt_.send_done(done_of(first_id, {2}, "eos"));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {2}, "eos")));
  send(cancel_op{"a"});
  EXPECT_EQ(next_line(), format_error({"unknown_id", "a", "no live request with id 'a'"}));
  // The runtime heard of no cancel: the first it hears is this one.
  send(op("b", {1}));
  EXPECT_EQ(next_line(), format_accepted("b", 1));
  send(cancel_op{"b"});
  ASSERT_TRUE(rt_.wait_cancels(1));
  EXPECT_EQ(rt_.cancels(), std::vector<request_id>{first_id + 1});
}

TEST_F(bridge_test, forwards_a_cancel_under_the_runtime_id) {
  send(op("a", {1}));
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  send(op("b", {1}));
  EXPECT_EQ(next_line(), format_accepted("b", 1));
  send(cancel_op{"b"});
  ASSERT_TRUE(rt_.wait_cancels(1));
  EXPECT_EQ(rt_.cancels(), std::vector<request_id>{first_id + 1});
  rt_.send_done(done_of(first_id + 1, {}, "aborted"));
  EXPECT_EQ(next_line(), format_done("b", done_of(first_id + 1, {}, "aborted")));
}

TEST_F(bridge_test, cancels_a_request_cancelled_before_its_admission) {
  rt_.hold();
  send(op("a", {1}));
  ASSERT_TRUE(rt_.wait_generates(1));
  send(cancel_op{"a"}); // pending: no error, the cancel waits for the admission
  rt_.admit_held();
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  ASSERT_TRUE(rt_.wait_cancels(1));
  EXPECT_EQ(rt_.cancels(), std::vector<request_id>{first_id});
  rt_.send_done(done_of(first_id, {}, "aborted"));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {}, "aborted")));
}

TEST_F(bridge_test, answers_stats_with_the_runtime_figures) {
  send(stats_op{});
  EXPECT_EQ(next_line(), format_stats(fake_runtime::figures()));
}

TEST_F(bridge_test, drains_at_once_when_nothing_is_live) {
  send(drain_atom::value);
  EXPECT_EQ(next_line(), "");
}

TEST_F(bridge_test, drains_after_the_last_live_request_ends) {
  send(op("a", {1}));
  EXPECT_EQ(next_line(), format_accepted("a", 1));
  rt_.hold();
  send(op("b", {1}));
  ASSERT_TRUE(rt_.wait_generates(2));
  send(drain_atom::value); // a is live, b pending
  send(op_with_prompt("c", "refuse:overloaded"));
  EXPECT_EQ(next_line(), format_error({"overloaded", "c", "refused by the fake runtime"}));
  rt_.send_done(done_of(first_id, {}, "aborted"));
  EXPECT_EQ(next_line(), format_done("a", done_of(first_id, {}, "aborted")));
  rt_.admit_held();
  EXPECT_EQ(next_line(), format_accepted("b", 1));
  rt_.send_done(done_of(first_id + 1, {}, "aborted"));
  EXPECT_EQ(next_line(), format_done("b", done_of(first_id + 1, {}, "aborted")));
  EXPECT_EQ(next_line(), ""); // drained only now
}

} // namespace
} // namespace kvactor::net
