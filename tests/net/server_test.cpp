// The server over real loopback sockets, in front of the actors and a
// stand-in model (tests/actors/test_runner.hpp).

#include "net/session.hpp"

#include "net/client.hpp"
#include "test_runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

namespace kvactor::net {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using kvactor::testing::test_runner;

constexpr int32_t vocab = test_runtime::vocab;
using test_runtime_ptr = std::unique_ptr<test_runtime>;

std::vector<int32_t> expected_output(std::vector<int32_t> history, int32_t n) {
  return test_runtime::expected_output(std::move(history), n);
}

class server_test : public ::testing::Test {
protected:
  void start(int32_t device_blocks = 256, int32_t max_waiting = 1024,
             session_options options = {}) {
    rt_ = std::make_unique<test_runtime>(sys_, device_blocks, max_waiting);
    runner_ = rt_->runner;
    runtime_ = rt_->runtime;
    server_ = serve_on_loopback(line_protocol(sys_, runtime_, options));
    port_ = server_->port();
  }

  void TearDown() override {
    if (server_)
      stop_serving(*server_, sys_, runtime_);
  }

  void shutdown_runtime() { shutdown(sys_, runtime_); }

  std::unique_ptr<client> connect() {
    auto c = client::connect("127.0.0.1", port_);
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<client>>(c));
    return std::move(std::get<std::unique_ptr<client>>(c));
  }

  // Reads events until the done (or error) of `id`; returns them all.
  static std::vector<server_event> until_end(client& c, const std::string& id) {
    std::vector<server_event> events;
    while (auto e = c.read_event()) {
      events.push_back(*e);
      if (e->id == id && (e->event == "done" || e->event == "error"))
        break;
    }
    return events;
  }

  server_event stats(client& c) {
    c.send(R"({"op":"stats"})" "\n");
    while (auto e = c.read_event())
      if (e->event == "stats")
        return *e;
    ADD_FAILURE() << "no stats";
    return {};
  }

  // Polls stats until no request is live and no block is in use.
  void expect_idle(client& c) {
    std::string line;
    for (int i = 0; i < 500; ++i) {
      line = stats(c).line;
      if (line.find(R"("device_blocks_in_use":0,)") != std::string::npos &&
          line.find(R"("running":0,"waiting":0,"swapped":0)") != std::string::npos)
        break;
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_THAT(line, HasSubstr(R"("device_blocks_in_use":0,)"));
    EXPECT_THAT(line, HasSubstr(R"("running":0,"waiting":0,"swapped":0)"));
    EXPECT_THAT(line, HasSubstr(R"("invariants_ok":true)"));
  }

  generate_request tokens_request(std::vector<int32_t> prompt, int32_t max_tokens) {
    generate_request r;
    r.prompt_tokens = std::move(prompt);
    r.max_tokens = max_tokens;
    return r;
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  test_runtime_ptr rt_;
  std::shared_ptr<test_runner> runner_;
  runtime_actor runtime_;
  std::unique_ptr<server> server_;
  uint16_t port_ = 0;
};

TEST_F(server_test, streams_a_generation_in_order) {
  start();
  auto c = connect();
  c->send(generate_line("r1", tokens_request({1, 2, 3}, 5)));
  auto events = until_end(*c, "r1");
  ASSERT_GE(events.size(), 7u);
  EXPECT_EQ(events.front().event, "accepted");
  EXPECT_EQ(events.front().prompt_tokens, 3);
  std::vector<int32_t> streamed;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i].event, "token");
    EXPECT_EQ(events[i].index, int64_t(i - 1));
    streamed.push_back(int32_t(events[i].token));
  }
  const auto& done = events.back();
  EXPECT_EQ(done.event, "done");
  EXPECT_EQ(done.finish_reason, "max_tokens");
  EXPECT_EQ(done.tokens, expected_output({1, 2, 3}, 5));
  EXPECT_EQ(streamed, done.tokens);
  EXPECT_EQ(done.completion_tokens, 5);
  c->send(R"({"op":"ping"})" "\n");
  EXPECT_EQ(c->read_event()->event, "pong");
}

// return_token_ids: accepted carries the prompt's ids as the model got them.
TEST_F(server_test, answers_the_prompts_ids_when_asked) {
  start();
  auto c = connect();
  generate_request r = tokens_request({4, 5, 6}, 1);
  r.return_prompt_tokens = true;
  c->send(generate_line("ids", r));
  auto events = until_end(*c, "ids");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "accepted");
  EXPECT_EQ(events.front().prompt_token_ids, (std::vector<int32_t>{4, 5, 6}));
  c->send(generate_line("plain", tokens_request({4, 5, 6}, 1)));
  events = until_end(*c, "plain");
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.front().prompt_token_ids.empty());
  EXPECT_THAT(events.front().line, ::testing::Not(HasSubstr("prompt_token_ids")));
}

TEST_F(server_test, interleaves_requests_of_concurrent_clients) {
  start();
  std::vector<std::thread> clients;
  std::atomic<int> ok = 0;
  for (int k = 0; k < 4; ++k)
    clients.emplace_back([&, k] {
      auto c = connect();
      std::map<std::string, std::vector<int32_t>> prompts;
      for (int r = 0; r < 3; ++r) {
        std::string id = "c" + std::to_string(k) + "r" + std::to_string(r);
        prompts[id] = {k * 10 + r + 1, 7, 9};
        c->send(generate_line(id, tokens_request(prompts[id], 8)));
      }
      std::set<std::string> done;
      while (done.size() < prompts.size()) {
        auto e = c->read_event();
        if (!e)
          return;
        if (e->event == "done") {
          if (e->tokens == expected_output(prompts[e->id], 8))
            ++ok;
          done.insert(e->id);
        }
      }
    });
  for (auto& t : clients)
    t.join();
  EXPECT_EQ(ok, 12);
}

TEST_F(server_test, answers_every_error_code) {
  session_options small;
  small.max_line_bytes = 256;
  start(64, 1, small);
  auto c = connect();
  auto expect_error = [&](std::string line, std::string code, std::optional<std::string> id) {
    c->send(line);
    auto e = c->read_event();
    ASSERT_TRUE(e.has_value()) << line;
    EXPECT_EQ(e->event, "error") << line;
    EXPECT_EQ(e->code, code) << line;
    EXPECT_EQ(e->id, id.value_or("")) << line;
    if (!id) {
      EXPECT_THAT(e->line, HasSubstr(R"("id":null)"));
    }
  };
  expect_error("{nope\n", "bad_json", std::nullopt);
  expect_error(R"({"op":"dance","id":"a"})" "\n", "unknown_op", "a");
  expect_error(R"({"op":"generate","id":"a"})" "\n", "missing_field", "a");
  expect_error(R"({"op":"generate","id":"a","prompt":"x","top_p":2})" "\n", "invalid_field", "a");
  expect_error(R"({"op":"generate","id":"a","prompt_tokens":[99999]})" "\n", "invalid_field", "a");
  expect_error(R"({"op":"cancel","id":"ghost"})" "\n", "unknown_id", "ghost");
  expect_error(std::string(300, ' ') + R"({"op":"ping"})" "\n", "line_too_long", std::nullopt);
  expect_error(generate_line("long", tokens_request(std::vector<int32_t>(40, 5), 9000)),
               "prompt_too_long", "long");
  // The connection is still usable after all of that.
  c->send(R"({"op":"ping"})" "\n");
  EXPECT_EQ(c->read_event()->event, "pong");

  // duplicate_id and overloaded: hold the model so requests stay live.
  runner_->pause();
  c->send(generate_line("d", tokens_request({1, 2}, 3)));
  EXPECT_EQ(c->read_event()->event, "accepted");
  expect_error(generate_line("d", tokens_request({1, 2}, 3)), "duplicate_id", "d");
  c->send(generate_line("w1", tokens_request({3, 4}, 3))); // waits (limit 1)
  EXPECT_EQ(c->read_event()->event, "accepted");
  expect_error(generate_line("w2", tokens_request({5, 6}, 3)), "overloaded", "w2");
  runner_->resume();
  auto rest = until_end(*c, "w1");
  EXPECT_EQ(rest.back().event, "done");
}

TEST_F(server_test, reassembles_split_lines_and_splits_joined_ones) {
  start();
  auto c = connect();
  const std::string line = generate_line("s", tokens_request({4, 5, 6}, 3));
  for (char ch : line) { // one byte per segment
    c->send(std::string_view(&ch, 1));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  auto events = until_end(*c, "s");
  EXPECT_EQ(events.back().tokens, expected_output({4, 5, 6}, 3));
  c->send(std::string(R"({"op":"ping"})" "\n") + R"({"op":"ping"})" "\r\n" +
          generate_line("t", tokens_request({7}, 2)));
  EXPECT_EQ(c->read_event()->event, "pong");
  EXPECT_EQ(c->read_event()->event, "pong");
  EXPECT_EQ(until_end(*c, "t").back().tokens, expected_output({7}, 2));
}

TEST_F(server_test, cancel_and_disconnect_free_every_block) {
  start(1024);
  runner_->set_step_time(1ms);
  auto c = connect();
  c->send(generate_line("x", tokens_request({1, 2, 3}, 1500)));
  EXPECT_EQ(c->read_event()->event, "accepted");
  c->send(cancel_line("x"));
  auto events = until_end(*c, "x");
  EXPECT_EQ(events.back().finish_reason, "aborted");

  auto gone = connect();
  gone->send(generate_line("y", tokens_request({4, 5}, 1500)));
  EXPECT_EQ(gone->read_event()->event, "accepted");
  gone->close(); // mid-generation
  expect_idle(*c);
}

TEST_F(server_test, cuts_off_a_client_that_does_not_read) {
  session_options tight;
  tight.max_output_bytes = 4096;
  tight.socket_send_buffer = 4096;
  start(2048, 1024, tight);
  auto slow = connect();
  slow->set_receive_buffer(4096); // else the kernel would absorb the whole output
  slow->send(generate_line("flood", tokens_request({1}, 6000)));
  auto c = connect();
  for (int i = 0; i < 1000; ++i) {
    auto s = stats(*c);
    if (s.line.find(R"("requests_aborted":1)") != std::string::npos)
      break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_THAT(stats(*c).line, HasSubstr(R"("requests_aborted":1)"));
  expect_idle(*c);
}

TEST_F(server_test, serves_256_concurrent_connections) {
  start(2048);
  std::vector<std::unique_ptr<client>> clients;
  for (int i = 0; i < 256; ++i) {
    clients.push_back(connect());
    clients.back()->send(generate_line("r", tokens_request({i % 100 + 1, 2}, 3)));
  }
  int done = 0;
  for (int i = 0; i < 256; ++i) {
    auto events = until_end(*clients[i], "r");
    done += events.back().event == "done" &&
            events.back().tokens == expected_output({i % 100 + 1, 2}, 3);
  }
  EXPECT_EQ(done, 256);
}

TEST_F(server_test, shutdown_ends_live_requests_as_aborted_and_sends_their_done) {
  start(1024);
  runner_->set_step_time(1ms);
  auto c = connect();
  c->send(generate_line("a", tokens_request({1, 2}, 1500)));
  EXPECT_EQ(c->read_event()->event, "accepted");
  server_->stop_accepting();
  shutdown_runtime();
  std::thread stopper([&] { server_->stop(); });
  auto events = until_end(*c, "a");
  stopper.join();
  server_.reset();
  EXPECT_EQ(events.back().event, "done");
  EXPECT_EQ(events.back().finish_reason, "aborted");
  EXPECT_FALSE(c->read_line().has_value()); // then the server closed the connection
}

} // namespace
} // namespace kvactor::net
