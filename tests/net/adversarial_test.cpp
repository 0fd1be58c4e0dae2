// Both front doors under hostile and heavy clients, over real loopback
// sockets: pipelining, descriptor exhaustion, the connection limit, partial
// lines, oversized answers and bodies, batch floods. Each test ends by
// checking that an innocent client is still served in time and that the
// runtime is back to idle (0 blocks, 0 live, invariants ok).
//
// KVACTOR_ADVERSARIAL_SCALE=N multiplies the counts (the longer run,
// docs/tests.md, "Heavier runs").

#include "http_fixture.hpp"
#include "net/session.hpp"
#include "raw_socket.hpp"

#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>

namespace kvactor::net::testing {
namespace {

using ::testing::HasSubstr;

int32_t scale() {
  const char* s = std::getenv("KVACTOR_ADVERSARIAL_SCALE");
  return s ? std::max(1, std::atoi(s)) : 1;
}

std::string post(const std::string& body, const std::string& extra_headers = {}) {
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The whole responses in `bytes`, in order.
std::vector<response> responses_in(const std::string& bytes) {
  std::vector<response> out;
  size_t at = 0;
  while (at < bytes.size()) {
    http::response_parser<http::string_body> p;
    p.eager(true);
    p.body_limit(boost::none);
    boost::system::error_code ec;
    while (!p.is_done() && at < bytes.size()) {
      at += p.put(asio::buffer(bytes.data() + at, bytes.size() - at), ec);
      if (ec)
        return out; // incomplete, or not HTTP
    }
    if (!p.is_done())
      break;
    out.push_back(p.release());
  }
  return out;
}

class adversarial_test : public http_server_test {
protected:
  // Both front doors, sharing one connection limit as kvactor-serve's do.
  void start_both(int32_t max_connections = 1000, http_options http = {},
                  session_options line = {}) {
    limit_ = std::make_shared<connection_limit>(max_connections);
    start(256, 1024, http, limit_);
    line.unfinished_lines = budget_ =
      std::make_shared<input_budget>(line.unfinished_lines ? line.unfinished_lines->max_bytes()
                                                           : default_unfinished_line_bytes);
    line_ = serve_on_loopback(line_protocol(sys_, rt_->runtime, line), limit_);
  }

  void TearDown() override {
    if (line_)
      line_->stop_accepting();
    http_server_test::TearDown();
    if (line_)
      line_->stop();
  }

  // A completion on a fresh HTTP connection, answered in full in time.
  void expect_http_served() {
    raw_socket c(port_);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.write(post(R"({"prompt":[7,8],"max_tokens":3,"seed":1})",
                             "Connection: close\r\n")));
    const auto got = responses_in(c.read_to_end(10s));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].result_int(), 200);
    simdjson::dom::parser p;
    EXPECT_EQ(std::string_view(p.parse(got[0].body())["choices"].at(0)["text"]),
              expected_text({7, 8}, 3));
  }

  // A ping on a fresh line-protocol connection, answered in time.
  void expect_line_served() {
    raw_socket c(line_->port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.write(R"({"op":"ping"})" "\n"));
    EXPECT_THAT(c.read_until("\n", 10s), HasSubstr("pong"));
  }

  // An innocent client of each door is served, and the runtime is idle.
  void expect_innocents_served_and_idle() {
    expect_http_served();
    expect_line_served();
    idle_figures();
  }

  std::shared_ptr<connection_limit> limit_;
  std::shared_ptr<input_budget> budget_;
  std::unique_ptr<server> line_;
};

TEST_F(adversarial_test, a_request_pipelined_with_a_malformed_one_is_answered_then_the_400) {
  start_both();
  raw_socket c(port_);
  ASSERT_TRUE(c.write(post(R"({"prompt":[1,2,3],"max_tokens":4,"seed":1})") +
                      "GARBAGE / HTTP/9.9\r\n\r\n"));
  const auto got = responses_in(c.read_to_end(10s));
  EXPECT_TRUE(c.closed_by_server());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].result_int(), 200);
  simdjson::dom::parser p;
  EXPECT_EQ(std::string_view(p.parse(got[0].body())["choices"].at(0)["text"]),
            expected_text({1, 2, 3}, 4));
  EXPECT_EQ(got[1].result_int(), 400);
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, more_pipelined_requests_than_read_ahead_are_all_answered_in_order) {
  start_both();
  const int32_t n = 17 * scale(); // past the 16 read ahead: reading pauses
  std::string all;
  for (int32_t i = 0; i < n; ++i)
    all += post(R"({"prompt":[)" + std::to_string(1 + i % 100) + R"(],"max_tokens":2,"seed":1})",
                i + 1 == n ? "Connection: close\r\n" : "");
  raw_socket c(port_);
  ASSERT_TRUE(c.write(all));
  const auto got = responses_in(c.read_to_end(std::chrono::seconds(10 * scale())));
  ASSERT_EQ(got.size(), size_t(n));
  simdjson::dom::parser p;
  for (int32_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].result_int(), 200) << i;
    EXPECT_EQ(std::string_view(p.parse(got[i].body())["choices"].at(0)["text"]),
              expected_text({1 + i % 100}, 2))
      << i;
  }
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, a_whole_answer_larger_than_the_outbox_limit_is_written) {
  http_options small;
  small.max_output_bytes = 4096;
  start_both(1000, small);
  raw_socket c(port_);
  ASSERT_TRUE(c.write(post(R"({"prompt":[1,2],"max_tokens":16,"n":8,"logprobs":5})",
                           "Connection: close\r\n")));
  const auto got = responses_in(c.read_to_end(10s));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result_int(), 200);
  EXPECT_GT(got[0].body().size(), small.max_output_bytes);
  simdjson::dom::parser p;
  EXPECT_EQ(p.parse(got[0].body())["choices"].get_array().size(), 8u);
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, a_client_still_sending_an_oversized_body_reads_the_413) {
  http_options small;
  small.max_body_bytes = 1024;
  start_both(1000, small);
  raw_socket c(port_);
  // More than the sockets' buffers hold: the server answers and stops
  // reading long before the client has written it all.
  const std::string body(8 << 20, 'x');
  EXPECT_TRUE(c.write(post(body))) << "the server reset the connection under the client";
  const auto got = responses_in(c.read_to_end(10s));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result_int(), 413);
  EXPECT_THAT(got[0].body(), HasSubstr("1024 bytes"));
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, a_batch_over_the_choices_limit_is_refused_at_once) {
  http_options small;
  small.max_choices = 8;
  start_both(1000, small);
  std::string flood = R"({"max_tokens":4,"prompt":[)";
  for (int32_t i = 0; i < 2000 * scale(); ++i)
    flood += (i ? "," : "") + std::string(R"("a")");
  flood += "]}";
  http_client c(port_);
  const response batch = c.post("/v1/completions", flood);
  EXPECT_EQ(batch.result_int(), 400);
  EXPECT_THAT(batch.body(), HasSubstr("at most 8"));
  EXPECT_THAT(batch.body(), HasSubstr(R"("param":"prompt")"));
  const response many = c.post("/v1/completions", R"({"prompt":"a","n":9})");
  EXPECT_EQ(many.result_int(), 400);
  EXPECT_THAT(many.body(), HasSubstr(R"("param":"n")"));
  EXPECT_EQ(c.post("/v1/completions", R"({"prompt":"a","n":8,"max_tokens":2})").result_int(),
            200);
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, a_line_that_does_not_arrive_whole_in_time_ends_its_connection) {
  session_options quick;
  quick.line_timeout = 300ms;
  start_both(1000, {}, quick);
  raw_socket slow(line_->port());
  ASSERT_TRUE(slow.write(R"({"op":"pi)"));
  // A client that is idle between whole lines is not cut off.
  raw_socket idle(line_->port());
  ASSERT_TRUE(idle.write(R"({"op":"ping"})" "\n"));
  EXPECT_THAT(idle.read_until("\n", 5s), HasSubstr("pong"));
  EXPECT_THAT(slow.read_to_end(5s), HasSubstr(R"("code":"line_timeout")"));
  EXPECT_TRUE(slow.closed_by_server());
  std::this_thread::sleep_for(quick.line_timeout * 2);
  ASSERT_TRUE(idle.write(R"({"op":"ping"})" "\n"));
  EXPECT_THAT(idle.read_until("pong\"}\n{", 1s), HasSubstr("pong"));
  EXPECT_FALSE(idle.closed_by_server());
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, unfinished_lines_of_all_connections_share_one_budget) {
  session_options bounded;
  bounded.unfinished_lines = std::make_shared<input_budget>(256 << 10);
  start_both(1000, {}, bounded);
  raw_socket a(line_->port()), b(line_->port());
  ASSERT_TRUE(a.write(std::string(100 << 10, ' '))); // a partial line of 100 KiB
  for (int i = 0; i < 500 && budget_->used() < (100u << 10); ++i)
    std::this_thread::sleep_for(2ms);
  // b's line cannot be held beside a's: dropped, answered at its newline.
  ASSERT_TRUE(b.write(std::string(200 << 10, ' ') + "\n"));
  EXPECT_THAT(b.read_until("\n", 5s), HasSubstr(R"("code":"overloaded")"));
  expect_line_served(); // a short line still fits
  ASSERT_TRUE(a.write(R"({"op":"ping"})" "\n"));
  EXPECT_THAT(a.read_until("\n", 5s), HasSubstr("pong"));
  a.close();
  b.close();
  for (int i = 0; i < 500 && budget_->used() > 0; ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_EQ(budget_->used(), 0u);
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, clients_over_the_connection_limit_are_told_so_and_closed) {
  start_both(2);
  raw_socket line_client(line_->port());
  ASSERT_TRUE(line_client.write(R"({"op":"ping"})" "\n"));
  EXPECT_THAT(line_client.read_until("\n", 5s), HasSubstr("pong"));
  http_client http_keeper(port_);
  EXPECT_EQ(http_keeper.get("/v1/models").result_int(), 200);
  // The limit is shared: both doors refuse now.
  raw_socket refused_line(line_->port());
  EXPECT_THAT(refused_line.read_to_end(5s), HasSubstr(R"("code":"overloaded")"));
  EXPECT_TRUE(refused_line.closed_by_server());
  raw_socket refused_http(port_);
  const auto got = responses_in(refused_http.read_to_end(5s));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].result_int(), 503);
  EXPECT_EQ(got[0][http::field::retry_after], "1");
  // The first clients are still served; once one leaves, a new one is let in.
  ASSERT_TRUE(line_client.write(R"({"op":"ping"})" "\n"));
  EXPECT_THAT(line_client.read_until("pong\"}\n{", 1s), HasSubstr("pong"));
  line_client.close();
  for (int i = 0; i < 500 && limit_->num_open() > 1; ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_EQ(limit_->num_open(), 1);
  expect_line_served();
  http_keeper.close();
  for (int i = 0; i < 500 && limit_->num_open() > 0; ++i)
    std::this_thread::sleep_for(2ms);
  expect_innocents_served_and_idle();
}

// The process's open descriptors.
int32_t num_open_descriptors() {
  return static_cast<int32_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                            std::filesystem::directory_iterator{}));
}

TEST_F(adversarial_test, accepting_resumes_once_descriptors_come_back) {
  start_both();
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  for (int32_t round = 0; round < scale(); ++round) {
    // A lowered limit, every descriptor but the client's taken: the server
    // cannot accept it.
    rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(num_open_descriptors() + 16);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    std::vector<int> fillers;
    for (int fd; (fd = ::dup(0)) >= 0;)
      fillers.push_back(fd);
    ::close(fillers.back()); // for the client's socket
    fillers.pop_back();
    auto line_client = std::make_unique<raw_socket>(line_->port());
    const bool connected = line_client->ok();
    std::this_thread::sleep_for(100ms); // the server tries, and fails, to accept
    for (int fd : fillers)
      ::close(fd);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
    ASSERT_TRUE(connected);
    // Accepted once descriptors are back, and served.
    ASSERT_TRUE(line_client->write(R"({"op":"ping"})" "\n"));
    EXPECT_THAT(line_client->read_until("\n", 5s), HasSubstr("pong")) << "round " << round;
  }
  expect_innocents_served_and_idle();
}

TEST_F(adversarial_test, clients_gone_mid_stream_or_mid_line_leave_nothing_behind) {
  start_both();
  rt_->runner->set_step_time(1ms);
  for (int32_t i = 0; i < 20 * scale(); ++i) {
    raw_socket stream(port_), partial(line_->port());
    ASSERT_TRUE(stream.write(post(R"({"prompt":[1,2],"max_tokens":200,"stream":true})")));
    ASSERT_TRUE(partial.write(R"({"op":"generate","id":"x","prompt":"unfinished)"));
    EXPECT_THAT(stream.read_until("data: ", 5s), HasSubstr("data: "));
  } // both cut mid-way
  rt_->runner->set_step_time(0ms);
  for (int i = 0; i < 500 && (limit_->num_open() > 0 || budget_->used() > 0); ++i)
    std::this_thread::sleep_for(2ms);
  EXPECT_EQ(limit_->num_open(), 0);
  EXPECT_EQ(budget_->used(), 0u);
  expect_innocents_served_and_idle();
}

} // namespace
} // namespace kvactor::net::testing
