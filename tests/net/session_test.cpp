// The line protocol's session over loopback sockets, in front of a fake
// runtime (fake_runtime.hpp): what it answers itself, how it frames lines
// and when it ends its requests.

#include "net/session.hpp"

#include "fake_runtime.hpp"
#include "net/client.hpp"
#include "test_runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <map>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;
constexpr request_id first_id = fake_runtime::first_id;

class session_test : public ::testing::Test {
protected:
  void start(session_options options = {}) {
    auto protocol = line_protocol(sys_, rt_.handle(), options);
    auto make = protocol.make;
    protocol.make = [this, make](boost::asio::ip::tcp::socket socket) {
      auto c = make(std::move(socket));
      std::lock_guard lock(mutex_);
      sessions_.push_back(c);
      return c;
    };
    server_ = serve_on_loopback(std::move(protocol));
  }

  void TearDown() override {
    if (server_)
      server_->stop();
  }

  std::unique_ptr<client> connect() {
    auto c = client::connect("127.0.0.1", server_->port());
    EXPECT_TRUE(std::holds_alternative<std::unique_ptr<client>>(c));
    return std::move(std::get<std::unique_ptr<client>>(c));
  }

  // Calls drain() on the first session, on its strand, and returns once it has.
  void drain_first_session() {
    std::shared_ptr<connection> s;
    {
      std::lock_guard lock(mutex_);
      ASSERT_FALSE(sessions_.empty());
      s = sessions_.front().lock();
    }
    ASSERT_TRUE(s);
    std::promise<void> drained;
    boost::asio::post(s->executor(), [&] {
      s->drain();
      drained.set_value();
    });
    ASSERT_EQ(drained.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  }

  static server_event next(client& c) {
    auto e = c.read_event();
    EXPECT_TRUE(e.has_value());
    return e.value_or(server_event{});
  }

  static void expect_error(client& c, const std::string& code, std::optional<std::string> id) {
    auto e = next(c);
    EXPECT_EQ(e.event, "error") << e.line;
    EXPECT_EQ(e.code, code) << e.line;
    EXPECT_EQ(e.id, id.value_or("")) << e.line;
    if (!id) {
      EXPECT_THAT(e.line, HasSubstr(R"("id":null)"));
    }
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  fake_runtime rt_{sys_};
  std::mutex mutex_;
  std::vector<std::weak_ptr<connection>> sessions_;
  std::unique_ptr<server> server_;
};

TEST_F(session_test, answers_malformed_lines_itself_with_their_error_codes) {
  start();
  auto c = connect();
  struct case_t {
    std::string line, code;
    std::optional<std::string> id;
  };
  const std::vector<case_t> cases = {
    {"{nope\n", "bad_json", std::nullopt},
    {R"({"op":"ping"} x)" "\n", "bad_json", std::nullopt},
    {"{\"op\":\"generate\",\"id\":\"r\",\"prompt\":\"\xff\"}\n", "invalid_field", std::nullopt},
    {R"({"op":"dance","id":"a"})" "\n", "unknown_op", "a"},
    {R"({"op":"generate","id":"a"})" "\n", "missing_field", "a"},
    {R"({"op":"generate","id":"a","prompt":"x","max_tokens":0})" "\n", "invalid_field", "a"},
  };
  for (const auto& k : cases) {
    c->send(k.line);
    expect_error(*c, k.code, k.id);
  }
  // None of them reached the runtime: the first request it sees is this one.
  c->send(R"({"op":"generate","id":"ok","prompt":"hi"})" "\n");
  auto accepted = next(*c);
  EXPECT_EQ(accepted.event, "accepted");
  EXPECT_EQ(accepted.id, "ok");
  ASSERT_EQ(rt_.generates().size(), 1u);
  EXPECT_EQ(rt_.generates()[0].id, first_id);
  EXPECT_EQ(rt_.generates()[0].request.prompt, "hi");
}

TEST_F(session_test, ignores_blank_lines) {
  start();
  auto c = connect();
  c->send("\n\r\n\n" R"({"op":"ping"})" "\n");
  EXPECT_EQ(next(*c).event, "pong");
}

TEST_F(session_test, discards_a_line_over_the_limit_up_to_its_newline) {
  session_options small;
  small.max_line_bytes = 64;
  start(small);
  auto c = connect();
  std::string ping = R"({"op":"ping"})";
  c->send(std::string(64 - ping.size(), ' ') + ping + "\n"); // exactly at the limit
  EXPECT_EQ(next(*c).event, "pong");
  c->send(std::string(65 - ping.size(), ' ') + ping + "\n");
  expect_error(*c, "line_too_long", std::nullopt);
  // Longer than a read, with the next line in the same write.
  c->send(std::string(40000, 'x') + "\n" + ping + "\n");
  auto e = next(*c);
  EXPECT_EQ(e.code, "line_too_long");
  EXPECT_THAT(e.message, HasSubstr("64 bytes"));
  EXPECT_EQ(next(*c).event, "pong");
  // A ping inside the overlong line is discarded with it.
  c->send(std::string(100, 'y'));
  c->send(ping + "\n" + ping + "\n");
  expect_error(*c, "line_too_long", std::nullopt);
  EXPECT_EQ(next(*c).event, "pong");
}

TEST_F(session_test, answers_pipelined_requests) {
  start();
  auto c = connect();
  c->send(R"({"op":"generate","id":"a","prompt":"one"})" "\n"
          R"({"op":"generate","id":"b","prompt_tokens":[1,2]})" "\n"
          R"({"op":"ping"})" "\n"
          R"({"op":"generate","id":"c","prompt":"three"})" "\n"
          R"({"op":"cancel","id":"zz"})" "\n"
          R"({"op":"stats"})" "\n");
  std::vector<std::string> accepted;
  std::map<std::string, server_event> others;
  for (int i = 0; i < 6; ++i) {
    auto e = next(*c);
    if (e.event == "accepted")
      accepted.push_back(e.id);
    else
      others[e.event] = e;
  }
  EXPECT_EQ(accepted, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(others.size(), 3u);
  EXPECT_EQ(others.count("pong"), 1u);
  EXPECT_EQ(others["error"].code, "unknown_id");
  EXPECT_EQ(others["error"].id, "zz");
  EXPECT_THAT(others["stats"].line, HasSubstr(R"("device_blocks_total":42)"));
  // The runtime got the requests in the order of the lines.
  auto calls = rt_.generates();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].request.prompt, "one");
  EXPECT_EQ(calls[1].request.prompt_tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(calls[2].request.prompt, "three");
  EXPECT_EQ(calls[2].id, first_id + 2);
}

TEST_F(session_test, a_peer_that_closes_mid_stream_ends_its_requests) {
  start();
  auto c = connect();
  c->send(R"({"op":"generate","id":"a","prompt":"x"})" "\n"
          R"({"op":"generate","id":"b","prompt":"y"})" "\n");
  EXPECT_EQ(next(*c).event, "accepted");
  EXPECT_EQ(next(*c).event, "accepted");
  rt_.send_token(first_id, 0, 5, "t");
  auto token = next(*c);
  EXPECT_EQ(token.event, "token");
  EXPECT_EQ(token.id, "a");
  c->close();
  // The bridge, the requests' sink, went down: the runtime cancels both.
  ASSERT_TRUE(rt_.wait_sinks_down(2));
  EXPECT_EQ(rt_.sinks_down(), (std::vector<request_id>{first_id, first_id + 1}));
}

TEST_F(session_test, drain_closes_once_the_last_live_request_has_ended) {
  start();
  auto c = connect();
  c->send(R"({"op":"generate","id":"a","prompt":"x"})" "\n");
  EXPECT_EQ(next(*c).event, "accepted");
  drain_first_session(); // the request is live: the connection stays open
  rt_.send_token(first_id, 0, 5, "t");
  done_event d;
  d.id = first_id;
  d.finish_reason = finish_reason::aborted;
  d.tokens = {5};
  rt_.send_done(d);
  EXPECT_EQ(next(*c).event, "token");
  auto done = next(*c);
  EXPECT_EQ(done.event, "done");
  EXPECT_EQ(done.finish_reason, "aborted");
  EXPECT_FALSE(c->read_line().has_value()); // then the session closed
}

} // namespace
} // namespace kvactor::net
