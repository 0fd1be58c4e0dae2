// The line-protocol client library: its lines against the server's parser,
// its parsing of the server's lines, and the client against a real loopback
// server (the runtime's actors before a stand-in model) and a scripted peer.

#include "net/client.hpp"

#include "net/session.hpp"
#include "test_runtime.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using boost::asio::ip::tcp;

TEST(client_http, writes_a_completions_request_and_reads_a_status_line) {
  EXPECT_EQ(completions_request("h", R"({"a":1})"),
            "POST /v1/completions HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
            "Connection: close\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
  EXPECT_EQ(http_status("HTTP/1.1 200 OK"), 200);
  EXPECT_EQ(http_status("HTTP/1.0 429 Too Many Requests"), 429);
  EXPECT_EQ(http_status("data: x"), 0);
  EXPECT_EQ(http_status("HTTP/1.1 20"), 0);
}

TEST(client_lines, parse_event_reads_every_field_of_a_done_line) {
  done_event d{7, finish_reason::stop, {4, 5, 6}, "a \"quoted\"\nline", 11, 3, 2, 1.5, 20.25, 4};
  const std::string line = format_done("r1", d);
  auto e = parse_event(std::string_view(line).substr(0, line.size() - 1)); // without its '\n'
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->event, "done");
  EXPECT_EQ(e->id, "r1");
  EXPECT_EQ(e->finish_reason, "stop");
  EXPECT_EQ(e->tokens, (std::vector<int32_t>{4, 5, 6}));
  EXPECT_EQ(e->text, "a \"quoted\"\nline");
  EXPECT_EQ(e->prompt_tokens, 11);
  EXPECT_EQ(e->completion_tokens, 3);
  EXPECT_EQ(e->cached_tokens, 2);
  EXPECT_DOUBLE_EQ(e->ttft_ms, 1.5);
  EXPECT_DOUBLE_EQ(e->total_ms, 20.25);
  EXPECT_EQ(e->preemptions, 4);
  EXPECT_EQ(e->line + "\n", line);
}

TEST(client_lines, parse_event_reads_accepted_token_and_error_lines) {
  auto a = parse_event(format_accepted("x", 9));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->event, "accepted");
  EXPECT_EQ(a->prompt_tokens, 9);
  EXPECT_TRUE(a->prompt_token_ids.empty());
  auto ids = parse_event(format_accepted("x", 2, {7, 8}));
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->prompt_token_ids, (std::vector<int32_t>{7, 8}));
  auto t = parse_event(format_token("x", {1, 3, 250, "\xc3\xa9"}));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->index, 3);
  EXPECT_EQ(t->token, 250);
  EXPECT_EQ(t->text, "\xc3\xa9");
  auto n = parse_event(format_error({"bad_json", std::nullopt, "invalid JSON"}));
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->event, "error");
  EXPECT_EQ(n->id, ""); // "id": null
  EXPECT_EQ(n->code, "bad_json");
  EXPECT_EQ(n->message, "invalid JSON");
}

TEST(client_lines, parse_event_refuses_lines_that_are_not_events) {
  for (auto line : {"", "not json", "[1,2]", R"({"id":"x","code":"y"})", R"({"event":1})",
                    R"({"event":"pong")"})
    EXPECT_FALSE(parse_event(line).has_value()) << line;
}

TEST(client_lines, generate_line_reads_back_as_the_same_request) {
  generate_request r;
  r.prompt_tokens = {3, 1, 4};
  r.max_tokens = 17;
  r.temperature = 0.75f;
  r.top_k = 40;
  r.top_p = 0.5f;
  r.seed = (uint64_t{1} << 63) + 12345; // above int64: the whole range goes through
  r.priority = -3;
  r.stop = {"\n\n", "END\""};
  r.ignore_eos = true;
  line_parser p;
  const std::string line = generate_line("g\"1", r);
  ASSERT_EQ(line.back(), '\n');
  auto m = p.parse(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(std::holds_alternative<generate_op>(m)) << line;
  const auto& g = std::get<generate_op>(m);
  EXPECT_EQ(g.id, "g\"1");
  EXPECT_EQ(g.request.prompt_tokens, r.prompt_tokens);
  EXPECT_TRUE(g.request.prompt.empty());
  EXPECT_EQ(g.request.max_tokens, 17);
  EXPECT_FLOAT_EQ(g.request.temperature, 0.75f);
  EXPECT_EQ(g.request.top_k, 40);
  EXPECT_FLOAT_EQ(g.request.top_p, 0.5f);
  EXPECT_EQ(g.request.seed, r.seed);
  EXPECT_EQ(g.request.priority, -3);
  EXPECT_EQ(g.request.stop, r.stop);
  EXPECT_TRUE(g.request.ignore_eos);
  EXPECT_TRUE(g.request.add_special_tokens);

  generate_request text;
  text.prompt = "caf\xc3\xa9\tau lait";
  auto t = p.parse(generate_line("g2", text));
  ASSERT_TRUE(std::holds_alternative<generate_op>(t));
  EXPECT_EQ(std::get<generate_op>(t).request.prompt, text.prompt);
  EXPECT_TRUE(std::get<generate_op>(t).request.prompt_tokens.empty());
  EXPECT_TRUE(std::get<generate_op>(t).request.stop.empty());
  EXPECT_TRUE(std::get<generate_op>(t).request.add_special_tokens);
  text.add_special_tokens = false;
  t = p.parse(generate_line("g3", text));
  ASSERT_TRUE(std::holds_alternative<generate_op>(t));
  EXPECT_FALSE(std::get<generate_op>(t).request.add_special_tokens);
}

TEST(client_lines, generate_line_sends_the_sampling_fields_that_differ_from_their_defaults) {
  generate_request r;
  r.prompt = "x";
  const std::string plain = generate_line("p", r);
  for (const char* key : {"min_p", "presence_penalty", "frequency_penalty", "repetition_penalty",
                          "logit_bias", "stop_token_ids", "min_tokens", "add_special_tokens"})
    EXPECT_THAT(plain, Not(HasSubstr(key))) << key;

  r.min_p = 0.25f;
  r.presence_penalty = -0.5f;
  r.frequency_penalty = 1.5f;
  r.repetition_penalty = 1.25f;
  r.logit_bias = {{50256, -100.0f}, {7, 2.5f}};
  r.stop_token_ids = {2, 13};
  r.min_tokens = 3;
  const std::string line = generate_line("s", r);
  EXPECT_THAT(line, HasSubstr(R"("logit_bias":{"50256":-100,"7":2.5})"));
  line_parser p;
  auto m = p.parse(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(std::holds_alternative<generate_op>(m)) << line;
  const auto& g = std::get<generate_op>(m).request;
  EXPECT_FLOAT_EQ(g.min_p, 0.25f);
  EXPECT_FLOAT_EQ(g.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(g.frequency_penalty, 1.5f);
  EXPECT_FLOAT_EQ(g.repetition_penalty, 1.25f);
  ASSERT_EQ(g.logit_bias.size(), 2u);
  EXPECT_EQ(g.logit_bias[0].token, 50256);
  EXPECT_FLOAT_EQ(g.logit_bias[0].bias, -100.0f);
  EXPECT_EQ(g.logit_bias[1].token, 7);
  EXPECT_FLOAT_EQ(g.logit_bias[1].bias, 2.5f);
  EXPECT_EQ(g.stop_token_ids, r.stop_token_ids);
  EXPECT_EQ(g.min_tokens, 3);
}

// A client that sends only what its user gave leaves the others to the
// model's generation_config.json, which the server applies to fields left
// out; a field given at generate_request's own value is still sent.
TEST(client_lines, generate_line_leaves_out_the_sampling_fields_not_given) {
  generate_request r;
  r.prompt = "x";
  const given_sampling none{false, false, false, false, false};
  const std::string bare = generate_line("b", r, none);
  for (const char* key : {"temperature", "top_k", "top_p", "min_p", "repetition_penalty"})
    EXPECT_THAT(bare, Not(HasSubstr(key))) << key;
  model::sampling_defaults model_defaults;
  model_defaults.temperature = 0.6f;
  model_defaults.top_p = 0.9f;
  line_parser with_defaults(model_defaults);
  auto m = with_defaults.parse(std::string_view(bare).substr(0, bare.size() - 1));
  ASSERT_TRUE(std::holds_alternative<generate_op>(m)) << bare;
  EXPECT_FLOAT_EQ(std::get<generate_op>(m).request.temperature, 0.6f);
  EXPECT_FLOAT_EQ(std::get<generate_op>(m).request.top_p, 0.9f);

  given_sampling greedy = none;
  greedy.temperature = true; // temperature 0, as given
  const std::string line = generate_line("g", r, greedy);
  EXPECT_THAT(line, HasSubstr(R"("temperature":0)"));
  m = with_defaults.parse(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(std::holds_alternative<generate_op>(m)) << line;
  EXPECT_FLOAT_EQ(std::get<generate_op>(m).request.temperature, 0.0f);
  EXPECT_FLOAT_EQ(std::get<generate_op>(m).request.top_p, 0.9f);
  // By default temperature, top_k and top_p are fixed.
  EXPECT_THAT(generate_line("d", r), HasSubstr(R"("temperature":0,"top_k":0,"top_p":1)"));
}

TEST(client_lines, cancel_line_reads_back_as_a_cancel) {
  line_parser p;
  auto m = p.parse(cancel_line("r\\9"));
  ASSERT_TRUE(std::holds_alternative<cancel_op>(m));
  EXPECT_EQ(std::get<cancel_op>(m).id, "r\\9");
}

TEST(client_connect, names_the_address_it_cannot_reach) {
  boost::asio::io_context io;
  tcp::acceptor closed(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = closed.local_endpoint().port();
  closed.close(); // nobody listens there now
  auto c = client::connect("127.0.0.1", port);
  ASSERT_TRUE(std::holds_alternative<std::string>(c));
  EXPECT_THAT(std::get<std::string>(c), HasSubstr("127.0.0.1:" + std::to_string(port)));
}

// A peer that accepts one connection, writes `chunks` one write each, and
// closes it.
class scripted_peer {
public:
  explicit scripted_peer(std::vector<std::string> chunks)
    : acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
      thread_([this, chunks = std::move(chunks)] {
        tcp::socket s(io_);
        acceptor_.accept(s);
        for (const auto& chunk : chunks)
          boost::asio::write(s, boost::asio::buffer(chunk));
        s.shutdown(tcp::socket::shutdown_both);
      }) {}
  ~scripted_peer() { thread_.join(); }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

private:
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST(client_connect, frames_lines_however_they_arrive) {
  scripted_peer peer({"one\ntwo\nthr", "ee\n", "{\"event\":\"pong\"}\nfo", "ur"});
  auto c = client::connect("127.0.0.1", peer.port());
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<client>>(c));
  auto& cl = *std::get<std::unique_ptr<client>>(c);
  EXPECT_EQ(cl.read_line(), "one");
  EXPECT_EQ(cl.read_line(), "two");
  EXPECT_EQ(cl.read_line(), "three");
  auto pong = cl.read_event();
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->event, "pong");
  EXPECT_EQ(cl.read_line(), std::nullopt); // "four" never ended: EOF
}

class client_test : public ::testing::Test {
protected:
  void SetUp() override {
    rt_ = std::make_unique<test_runtime>(sys_, 256, 1024);
    server_ = serve_on_loopback(line_protocol(sys_, rt_->runtime));
    auto c = client::connect("127.0.0.1", server_->port());
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<client>>(c));
    client_ = std::move(std::get<std::unique_ptr<client>>(c));
  }
  void TearDown() override { stop(); }
  void stop() {
    if (server_)
      stop_serving(*server_, sys_, rt_->runtime);
    server_.reset();
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  std::unique_ptr<test_runtime> rt_;
  std::unique_ptr<server> server_;
  std::unique_ptr<client> client_;
};

TEST_F(client_test, streams_a_generation_from_a_real_server) {
  generate_request r;
  r.prompt_tokens = {9, 8, 7};
  r.max_tokens = 4;
  ASSERT_TRUE(client_->send(generate_line("r", r)));
  auto accepted = client_->read_event();
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->event, "accepted");
  EXPECT_EQ(accepted->prompt_tokens, 3);
  std::vector<int32_t> streamed;
  for (int i = 0; i < 4; ++i) {
    auto t = client_->read_event();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->event, "token");
    EXPECT_EQ(t->index, i);
    streamed.push_back(static_cast<int32_t>(t->token));
  }
  auto done = client_->read_event();
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->finish_reason, "max_tokens");
  EXPECT_EQ(done->tokens, test_runtime::expected_output({9, 8, 7}, 4));
  EXPECT_EQ(done->tokens, streamed);
  EXPECT_EQ(done->prompt_tokens, 3);
  EXPECT_EQ(done->completion_tokens, 4);
}

TEST_F(client_test, reads_nothing_once_the_server_has_closed) {
  ASSERT_TRUE(client_->send(R"({"op":"ping"})" "\n"));
  EXPECT_EQ(client_->read_line(), R"({"event":"pong"})");
  stop();
  EXPECT_EQ(client_->read_line(), std::nullopt);
  EXPECT_FALSE(client_->read_event().has_value());
}

TEST_F(client_test, interrupt_ends_a_read_blocked_in_another_thread) {
  std::optional<std::string> got = "unset";
  std::thread reader([&] { got = client_->read_line(); }); // the server sends nothing
  client_->interrupt();
  reader.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST_F(client_test, cannot_send_once_closed) {
  client_->close();
  EXPECT_FALSE(client_->send(R"({"op":"ping"})" "\n"));
  EXPECT_EQ(client_->read_line(), std::nullopt);
}

} // namespace
} // namespace kvactor::net
