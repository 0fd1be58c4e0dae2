// The HTTP front over real loopback sockets, in front of the actors and a
// stand-in model (tests/actors/test_runner.hpp).

#include "net/http_session.hpp"

#include "net/json_writer.hpp"
#include "sse.hpp"
#include "test_runtime.hpp"

#include <boost/beast/http.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <set>
#include <thread>

namespace kvactor::net {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace asio = boost::asio;
namespace http = boost::beast::http;
using response = http::response<http::string_body>;

// A blocking HTTP/1.1 client on one connection.
class http_client {
public:
  explicit http_client(uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  void send_raw(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }

  void send(http::verb method, const std::string& target, const std::string& body = {}) {
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(socket_, req);
  }

  // The next response, chunked bodies joined; nullopt when the server closed.
  std::optional<response> read() {
    response res;
    boost::system::error_code ec;
    http::read(socket_, buffer_, res, ec);
    if (ec)
      return std::nullopt;
    return res;
  }

  response post(const std::string& target, const std::string& body) {
    send(http::verb::post, target, body);
    auto res = read();
    EXPECT_TRUE(res.has_value()) << body;
    return res.value_or(response{});
  }
  response get(const std::string& target) {
    send(http::verb::get, target);
    auto res = read();
    EXPECT_TRUE(res.has_value()) << target;
    return res.value_or(response{});
  }

  // Reads raw bytes until `what` has arrived.
  std::string read_until(const std::string& what) {
    std::string got;
    char chunk[4096];
    while (got.find(what) == std::string::npos) {
      boost::system::error_code ec;
      const size_t n = socket_.read_some(asio::buffer(chunk), ec);
      if (ec)
        break;
      got.append(chunk, n);
    }
    return got;
  }

  bool closed_by_server() {
    char c;
    boost::system::error_code ec;
    socket_.read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

  void close() { socket_.close(); }

private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

class http_server_test : public ::testing::Test {
protected:
  void start(int32_t device_blocks = 256, int32_t max_waiting = 1024, http_options options = {}) {
    rt_ = std::make_unique<test_runtime>(sys_, device_blocks, max_waiting);
    front_ = std::make_shared<http_front>(sys_, rt_->runtime, "tiny", options);
    server_ = serve_on_loopback(http_protocol(front_));
    port_ = server_->port();
  }

  void TearDown() override {
    if (server_)
      stop_serving(*server_, sys_, rt_->runtime);
  }

  runtime_figures figures() {
    runtime_figures f;
    caf::scoped_actor self{sys_};
    self->request(rt_->runtime, caf::infinite, figures_atom::value)
      .receive([&](const runtime_figures& x) { f = x; }, [](const caf::error&) {});
    return f;
  }

  // Polls until no request is live and no block is held.
  runtime_figures idle_figures() {
    runtime_figures f;
    for (int i = 0; i < 500; ++i) {
      f = figures();
      if (f.running + f.waiting + f.swapped == 0 && f.device_blocks_used == 0)
        break;
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(f.running + f.waiting + f.swapped, 0);
    EXPECT_EQ(f.device_blocks_used, 0);
    EXPECT_TRUE(f.broken_invariants.empty());
    return f;
  }

  // The text the stand-in model generates after a prompt of token ids, as
  // JSON carries it (invalid UTF-8 as U+FFFD).
  std::string expected_text(std::vector<int32_t> prompt, int32_t n, uint64_t seed = 1) {
    const auto out = test_runtime::expected_output(std::move(prompt), n, seed);
    simdjson::dom::parser p;
    return std::string(std::string_view(p.parse(json_writer().field("t", rt_->tokenizer->decode(out)).str())["t"]));
  }

  test_config cfg_;
  caf::actor_system sys_{cfg_};
  std::unique_ptr<test_runtime> rt_;
  std::shared_ptr<http_front> front_;
  std::unique_ptr<server> server_;
  uint16_t port_ = 0;
};

TEST_F(http_server_test, completes_a_prompt_of_token_ids) {
  start();
  http_client c(port_);
  const response res =
    c.post("/v1/completions", R"({"model":"tiny","prompt":[5,6,7],"max_tokens":6,"temperature":0})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  EXPECT_EQ(res[http::field::content_type], "application/json");
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(res.body());
  EXPECT_EQ(std::string_view(body["object"]), "text_completion");
  EXPECT_EQ(std::string_view(body["model"]), "tiny");
  EXPECT_EQ(std::string_view(body["id"]).substr(0, 5), "cmpl-");
  simdjson::dom::element choice = body["choices"].at(0);
  EXPECT_EQ(std::string_view(choice["text"]), expected_text({5, 6, 7}, 6));
  EXPECT_EQ(std::string_view(choice["finish_reason"]), "length");
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens"]), 3);
  EXPECT_EQ(int64_t(body["usage"]["completion_tokens"]), 6);
  EXPECT_EQ(int64_t(body["usage"]["total_tokens"]), 9);
}

// Greedy: each token is the most likely of its step, so its logprob is the
// largest of its alternatives'.
TEST_F(http_server_test, answers_each_tokens_logprobs_when_asked) {
  start();
  http_client c(port_);
  const response res = c.post("/v1/completions", R"({"prompt":[5,6,7],"max_tokens":6,"temperature":0,"logprobs":2})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  simdjson::dom::parser p;
  simdjson::dom::element lp = p.parse(res.body())["choices"].at(0)["logprobs"];
  simdjson::dom::array tokens = lp["tokens"], values = lp["token_logprobs"], top = lp["top_logprobs"];
  ASSERT_EQ(tokens.size(), 6u);
  ASSERT_EQ(values.size(), 6u);
  ASSERT_EQ(top.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const double v = values.at(i);
    EXPECT_LE(v, 0.0);
    double best = -1e9;
    size_t num_alternatives = 0;
    for (auto [text, logprob] : simdjson::dom::object(top.at(i))) {
      best = std::max(best, double(logprob));
      ++num_alternatives;
    }
    EXPECT_GE(num_alternatives, 1u); // two, or one where both render as the same text
    EXPECT_EQ(v, best) << "token " << i;
  }

  const response chat = c.post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],)"
                                                       R"("max_tokens":3,"logprobs":true,"top_logprobs":1})");
  ASSERT_EQ(chat.result_int(), 200) << chat.body();
  simdjson::dom::element body = p.parse(chat.body());
  simdjson::dom::array content = body["choices"].at(0)["logprobs"]["content"];
  EXPECT_EQ(int64_t(content.size()), int64_t(body["usage"]["completion_tokens"]));
  for (simdjson::dom::element e : content) EXPECT_EQ(simdjson::dom::array(e["top_logprobs"]).size(), 1u);
}

TEST_F(http_server_test, streams_the_same_text_as_events_ending_with_usage_and_done) {
  start();
  http_client c(port_);
  const std::string whole =
    c.post("/v1/completions", R"({"prompt":[9,8],"max_tokens":12,"seed":1})").body();
  simdjson::dom::parser p;
  const std::string text(std::string_view(p.parse(whole)["choices"].at(0)["text"]));

  const response res = c.post("/v1/completions", R"({"prompt":[9,8],"max_tokens":12,"seed":1,"stream":true,)"
                                                 R"("stream_options":{"include_usage":true}})");
  ASSERT_EQ(res.result_int(), 200);
  EXPECT_EQ(res[http::field::content_type], "text/event-stream");
  EXPECT_TRUE(res.chunked());
  const auto events = sse_events(res.body());
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string streamed;
  std::string finish;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    simdjson::dom::element choice = p.parse(events[i])["choices"].at(0);
    streamed += std::string_view(choice["text"]);
    if (!choice["finish_reason"].is_null())
      finish = std::string(std::string_view(choice["finish_reason"]));
  }
  EXPECT_EQ(streamed, text);
  EXPECT_EQ(finish, "length");
  EXPECT_EQ(int64_t(p.parse(events[events.size() - 2])["usage"]["completion_tokens"]), 12);
}

TEST_F(http_server_test, answers_a_batch_with_one_choice_per_prompt) {
  start();
  http_client c(port_);
  const response res = c.post("/v1/completions", R"({"prompt":[[1,2],[3,4,5]],"max_tokens":4,"seed":1})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(res.body());
  simdjson::dom::array choices = body["choices"];
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(std::string_view(choices.at(0)["text"]), expected_text({1, 2}, 4));
  EXPECT_EQ(std::string_view(choices.at(1)["text"]), expected_text({3, 4, 5}, 4));
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens"]), 5);
  EXPECT_EQ(int64_t(body["usage"]["completion_tokens"]), 8);
}

// n = 4 over a 10-token prompt (4 tokens a block): held at the choices'
// first step, they hold the two full blocks together and a copy each of the
// partial third (the last writer keeps the original): 6, not 12. Each
// choice equals a request of one choice with its seed, and they differ.
TEST_F(http_server_test, n_choices_share_the_prompts_blocks) {
  start();
  http_client c(port_);
  simdjson::dom::parser p;
  rt_->runner->pause();
  const std::string four = R"({"prompt":[1,2,3,4,5,6,7,8,9,10],"max_tokens":4,"n":4,"seed":20})";
  c.send(http::verb::post, "/v1/completions", four);
  ASSERT_TRUE(rt_->runner->wait_arrived(1)); // the prompt short of its last token
  rt_->runner->allow(1);
  ASSERT_TRUE(rt_->runner->wait_arrived(2)); // each choice's first token
  EXPECT_EQ(figures().device_blocks_used, 6);
  rt_->runner->resume();
  const auto shared = c.read();
  ASSERT_TRUE(shared);
  simdjson::dom::array four_choices = p.parse(shared->body())["choices"];
  ASSERT_EQ(four_choices.size(), 4u);
  std::set<std::string> distinct;
  for (int64_t k = 0; k < 4; ++k) {
    const response one = c.post("/v1/completions", R"({"prompt":[1,2,3,4,5,6,7,8,9,10],)"
                                                   R"("max_tokens":4,"seed":)" +
                                                     std::to_string(20 + k) + "}");
    simdjson::dom::parser q;
    const std::string_view alone = q.parse(one.body())["choices"].at(0)["text"];
    EXPECT_EQ(std::string_view(four_choices.at(size_t(k))["text"]), alone) << "choice " << k;
    distinct.emplace(alone);
  }
  EXPECT_EQ(distinct.size(), 4u);

  idle_figures();
}

// n choices of each prompt: prompt p's choice c is choice p * n + c and
// samples with seed + c; each prompt's tokens count once in the usage.
TEST_F(http_server_test, answers_n_choices_of_each_prompt) {
  start();
  http_client c(port_);
  const response res =
    c.post("/v1/completions", R"({"prompt":[[1,2],[3,4,5]],"max_tokens":4,"n":2,"seed":7})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(res.body());
  simdjson::dom::array choices = body["choices"];
  ASSERT_EQ(choices.size(), 4u);
  const std::vector<std::vector<int32_t>> prompts = {{1, 2}, {3, 4, 5}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(int64_t(choices.at(i)["index"]), int64_t(i));
    EXPECT_EQ(std::string_view(choices.at(i)["text"]), expected_text(prompts[i / 2], 4, 7 + i % 2))
      << "choice " << i;
  }
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens"]), 5);
  EXPECT_EQ(int64_t(body["usage"]["completion_tokens"]), 16);
  const response stream = c.post("/v1/completions", R"({"prompt":[9,8],"max_tokens":5,"n":3,)"
                                                    R"("seed":2,"stream":true})");
  ASSERT_EQ(stream.result_int(), 200);
  std::string streamed[3];
  int finished = 0;
  for (const auto& data : sse_events(stream.body())) {
    if (data == "[DONE]")
      continue;
    simdjson::dom::element chunk = p.parse(data)["choices"].at(0);
    const auto index = int64_t(chunk["index"]);
    ASSERT_TRUE(index >= 0 && index < 3) << data;
    streamed[index] += std::string_view(chunk["text"]);
    finished += !chunk["finish_reason"].is_null();
  }
  EXPECT_EQ(finished, 3);
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(streamed[k], expected_text({9, 8}, 5, 2 + uint64_t(k))) << "choice " << k;
  idle_figures();
}

TEST_F(http_server_test, answers_errors_in_openai_shape_and_stays_usable) {
  start();
  http_client c(port_);
  simdjson::dom::parser p;
  auto expect_error = [&](const response& res, int status, std::string_view param) {
    EXPECT_EQ(res.result_int(), status) << res.body();
    simdjson::dom::element e = p.parse(res.body())["error"];
    EXPECT_FALSE(std::string_view(e["message"]).empty());
    EXPECT_FALSE(std::string_view(e["type"]).empty());
    if (param.empty()) {
      EXPECT_TRUE(e["param"].is_null()) << res.body();
    } else {
      EXPECT_EQ(std::string_view(e["param"]), param) << res.body();
    }
  };
  expect_error(c.post("/v1/completions", "{not json"), 400, "");
  expect_error(c.post("/v1/completions", R"({"prompt":"a","top_p":7})"), 400, "top_p");
  expect_error(c.post("/v1/completions", R"({"prompt":"a","n":0})"), 400, "n");
  expect_error(c.post("/v1/completions", R"({"prompt":[1],"max_tokens":9000})"), 400, "prompt");
  expect_error(c.post("/v1/completions", R"({"prompt":[600]})"), 400, "");
  expect_error(c.post("/v1/completions", R"({"model":"other","prompt":"a"})"), 404, "model");
  expect_error(c.get("/v1/nothing"), 404, "");
  expect_error(c.get("/v1/completions"), 405, "");
  // Still the same connection, still answering.
  EXPECT_EQ(c.post("/v1/completions", R"({"prompt":[1],"max_tokens":1})").result_int(), 200);
  idle_figures();
}

TEST_F(http_server_test, answers_429_when_the_waiting_queue_is_full) {
  start(256, 1);
  rt_->runner->pause(); // hold the model so requests stay live
  http_client running(port_), waiting(port_), refused(port_);
  running.send(http::verb::post, "/v1/completions", R"({"prompt":[1,2],"max_tokens":3,"stream":true})");
  EXPECT_THAT(running.read_until("\r\n"), HasSubstr("200 OK")); // admitted
  ASSERT_TRUE(rt_->runner->wait_arrived(1));                     // and in a step
  waiting.send(http::verb::post, "/v1/completions", R"({"prompt":[3,4],"max_tokens":3,"stream":true})");
  EXPECT_THAT(waiting.read_until("\r\n"), HasSubstr("200 OK")); // waits (limit 1)
  const response res = refused.post("/v1/completions", R"({"prompt":[5,6],"max_tokens":3})");
  EXPECT_EQ(res.result_int(), 429) << res.body();
  EXPECT_THAT(res.body(), HasSubstr("waiting queue is full"));
  rt_->runner->resume();
  EXPECT_THAT(waiting.read_until("[DONE]"), HasSubstr("data: [DONE]"));
}

TEST_F(http_server_test, refuses_a_body_over_the_limit_and_closes) {
  http_options small;
  small.max_body_bytes = 64;
  start(256, 1024, small);
  http_client c(port_);
  const response res = c.post("/v1/completions", R"({"prompt":")" + std::string(100, 'x') + R"("})");
  EXPECT_EQ(res.result_int(), 413);
  EXPECT_THAT(res.body(), HasSubstr("64 bytes"));
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(http_server_test, answers_pipelined_requests_in_order) {
  start();
  http_client c(port_);
  std::string both;
  for (const char* body : {R"({"prompt":[1,2,3],"max_tokens":5,"seed":1})", R"({"prompt":[4],"max_tokens":2,"seed":1})"})
    both += "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
            std::to_string(std::strlen(body)) + "\r\n\r\n" + body;
  both += "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  c.send_raw(both);
  simdjson::dom::parser p;
  auto first = c.read();
  auto second = c.read();
  auto third = c.read();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(std::string_view(p.parse(first->body())["choices"].at(0)["text"]), expected_text({1, 2, 3}, 5));
  EXPECT_EQ(std::string_view(p.parse(second->body())["choices"].at(0)["text"]), expected_text({4}, 2));
  EXPECT_EQ(std::string_view(p.parse(third->body())["data"].at(0)["id"]), "tiny");
}

TEST_F(http_server_test, a_client_that_goes_away_mid_stream_cancels_its_request) {
  start(1024);
  rt_->runner->set_step_time(2ms);
  http_client c(port_);
  c.send(http::verb::post, "/v1/completions", R"({"prompt":[3,1],"max_tokens":3000,"stream":true})");
  EXPECT_THAT(c.read_until("data: "), HasSubstr("text/event-stream"));
  c.close();
  const runtime_figures f = idle_figures();
  EXPECT_EQ(f.requests_aborted, 1);
  EXPECT_LT(f.tokens_generated, 3000);
}

TEST_F(http_server_test, chats_through_the_models_template) {
  start();
  http_client c(port_);
  // The stand-in model has no chat template: the plain rendering, tokenized
  // by the runtime like any text prompt.
  const std::string rendered = "system: Be brief.\nuser: Hi\nassistant:";
  const auto prompt = rt_->tokenizer->encode(rendered);
  const response res = c.post("/v1/chat/completions",
                              R"({"model":"tiny","messages":[{"role":"system","content":"Be brief."},)"
                              R"({"role":"user","content":"Hi"}],"max_tokens":4,"ignore_eos":true,"seed":1})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(res.body());
  EXPECT_EQ(std::string_view(body["object"]), "chat.completion");
  EXPECT_EQ(std::string_view(body["id"]).substr(0, 9), "chatcmpl-");
  EXPECT_EQ(std::string_view(body["choices"].at(0)["message"]["content"]),
            expected_text({prompt.begin(), prompt.end()}, 4));
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens"]), int64_t(prompt.size()));

  const response stream = c.post("/v1/chat/completions",
                                 R"({"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":3})");
  ASSERT_EQ(stream.result_int(), 200);
  const auto events = sse_events(stream.body());
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(std::string_view(p.parse(events[0])["choices"].at(0)["delta"]["role"]), "assistant");
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(c.post("/v1/chat/completions", R"({"messages":[]})").result_int(), 400);
}

TEST_F(http_server_test, health_models_and_metrics) {
  start();
  http_client c(port_);
  const response health = c.get("/health");
  EXPECT_EQ(health.result_int(), 200);
  const response models = c.get("/v1/models");
  simdjson::dom::parser p;
  EXPECT_EQ(std::string_view(p.parse(models.body())["data"].at(0)["id"]), "tiny");
  EXPECT_EQ(std::string_view(p.parse(models.body())["object"]), "list");

  ASSERT_EQ(c.post("/v1/completions", R"({"prompt":[2,2],"max_tokens":3})").result_int(), 200);
  idle_figures();
  const response metrics = c.get("/metrics");
  EXPECT_EQ(metrics.result_int(), 200);
  EXPECT_THAT(std::string(metrics[http::field::content_type]), HasSubstr("text/plain; version=0.0.4"));
  const std::string& m = metrics.body();
  EXPECT_THAT(m, HasSubstr("kvactor:generation_tokens_total{model_name=\"tiny\"} 3\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:prompt_tokens_total{model_name=\"tiny\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:request_success_total{model_name=\"tiny\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:time_to_first_token_seconds_count{model_name=\"tiny\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:inter_token_latency_seconds_count{model_name=\"tiny\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:e2e_request_latency_seconds_count{model_name=\"tiny\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("kvactor:request_queue_time_seconds_count{model_name=\"tiny\"} 1\n"));

  front_->draining = true;
  EXPECT_EQ(c.get("/health").result_int(), 503);
  EXPECT_EQ(c.post("/v1/completions", R"({"prompt":[2],"max_tokens":1})").result_int(), 503);
}

TEST_F(http_server_test, shutdown_ends_a_live_stream_as_aborted_then_closes) {
  start(1024);
  rt_->runner->set_step_time(1ms);
  http_client c(port_);
  c.send(http::verb::post, "/v1/completions", R"({"prompt":[1,2],"max_tokens":1500,"stream":true})");
  std::string got = c.read_until("data: ");
  server_->stop_accepting();
  front_->draining = true;
  shutdown(sys_, rt_->runtime);
  std::thread stopper([&] { server_->stop(); });
  got += c.read_until("0\r\n\r\n");
  stopper.join();
  server_.reset();
  EXPECT_THAT(got, HasSubstr(R"("finish_reason":"abort")"));
  EXPECT_THAT(got, HasSubstr("data: [DONE]"));
  EXPECT_TRUE(c.closed_by_server());
}

} // namespace
} // namespace kvactor::net
