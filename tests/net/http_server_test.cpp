// The HTTP front over real loopback sockets, in front of the actors and a
// stand-in model (tests/actors/test_runner.hpp).

#include "http_fixture.hpp"

#include "sse.hpp"

#include <chrono>
#include <thread>

namespace kvactor::net {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using namespace kvactor::net::testing;

TEST_F(http_server_test, completes_a_prompt_of_token_ids) {
  start();
  http_client c(port_);
  const response res = c.post(
    "/v1/completions", R"({"model":"tiny","prompt":[5,6,7],"max_tokens":6,"temperature":0})");
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

  // return_token_ids: the prompt's ids come back from the runtime too.
  const response ids = c.post("/v1/completions", R"({"prompt":[5,6,7],"max_tokens":2,)"
                                                 R"("temperature":0,"return_token_ids":true})");
  ASSERT_EQ(ids.result_int(), 200) << ids.body();
  EXPECT_THAT(ids.body(), HasSubstr(R"("prompt_token_ids":[5,6,7])"));
}

// Greedy: each token is the most likely of its step, so its logprob is the
// largest of its alternatives'.
TEST_F(http_server_test, answers_each_tokens_logprobs_when_asked) {
  start();
  http_client c(port_);
  const response res =
    c.post("/v1/completions", R"({"prompt":[5,6,7],"max_tokens":6,"temperature":0,"logprobs":2})");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  simdjson::dom::parser p;
  simdjson::dom::element lp = p.parse(res.body())["choices"].at(0)["logprobs"];
  simdjson::dom::array tokens = lp["tokens"], values = lp["token_logprobs"],
                       top = lp["top_logprobs"];
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

  const response chat =
    c.post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],)"
                                   R"("max_tokens":3,"logprobs":true,"top_logprobs":1})");
  ASSERT_EQ(chat.result_int(), 200) << chat.body();
  simdjson::dom::element body = p.parse(chat.body());
  simdjson::dom::array content = body["choices"].at(0)["logprobs"]["content"];
  EXPECT_EQ(int64_t(content.size()), int64_t(body["usage"]["completion_tokens"]));
  for (simdjson::dom::element e : content)
    EXPECT_EQ(simdjson::dom::array(e["top_logprobs"]).size(), 1u);
}

TEST_F(http_server_test, streams_the_same_text_as_events_ending_with_usage_and_done) {
  start();
  http_client c(port_);
  const std::string whole =
    c.post("/v1/completions", R"({"prompt":[9,8],"max_tokens":12,"seed":1})").body();
  simdjson::dom::parser p;
  const std::string text(std::string_view(p.parse(whole)["choices"].at(0)["text"]));

  const response res =
    c.post("/v1/completions", R"({"prompt":[9,8],"max_tokens":12,"seed":1,"stream":true,)"
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
  const response res =
    c.post("/v1/completions", R"({"prompt":[[1,2],[3,4,5]],"max_tokens":4,"seed":1})");
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

TEST_F(http_server_test, tokenizes_and_detokenizes_with_the_models_tokenizer) {
  start();
  http_client c(port_);
  EXPECT_EQ(c.post("/tokenize", R"({"prompt":"hello"})").result_int(), 404); // none given
  front_->tokenizer = rt_->tokenizer;
  const auto ids = rt_->tokenizer->encode("hello world");
  ASSERT_FALSE(ids.empty());
  auto res = c.post("/tokenize", R"({"prompt":"hello world"})");
  EXPECT_EQ(res.result_int(), 200);
  json_writer expected;
  expected.field("tokens", std::vector<int32_t>(ids.begin(), ids.end()));
  EXPECT_THAT(res.body(), HasSubstr(expected.str().substr(1, expected.str().size() - 2)));
  res = c.post("/detokenize", expected.str());
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_THAT(res.body(), HasSubstr(R"("prompt":"hello world")"));
  EXPECT_EQ(c.post("/detokenize", R"({"tokens":"x"})").result_int(), 400);
  EXPECT_EQ(c.get("/tokenize").result_int(), 405);
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
  running.send(http::verb::post, "/v1/completions",
               R"({"prompt":[1,2],"max_tokens":3,"stream":true})");
  EXPECT_THAT(running.read_until("\r\n"), HasSubstr("200 OK")); // admitted
  ASSERT_TRUE(rt_->runner->wait_arrived(1));                     // and in a step
  waiting.send(http::verb::post, "/v1/completions",
               R"({"prompt":[3,4],"max_tokens":3,"stream":true})");
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
  const response res =
    c.post("/v1/completions", R"({"prompt":")" + std::string(100, 'x') + R"("})");
  EXPECT_EQ(res.result_int(), 413);
  EXPECT_THAT(res.body(), HasSubstr("64 bytes"));
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(http_server_test, answers_pipelined_requests_in_order) {
  start();
  http_client c(port_);
  std::string both;
  for (const char* body : {R"({"prompt":[1,2,3],"max_tokens":5,"seed":1})",
                           R"({"prompt":[4],"max_tokens":2,"seed":1})"})
    both += "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
            std::to_string(std::strlen(body)) + "\r\n\r\n" + body;
  both += "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  c.send_raw(both);
  simdjson::dom::parser p;
  auto first = c.read();
  auto second = c.read();
  auto third = c.read();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(std::string_view(p.parse(first->body())["choices"].at(0)["text"]),
            expected_text({1, 2, 3}, 5));
  EXPECT_EQ(std::string_view(p.parse(second->body())["choices"].at(0)["text"]),
            expected_text({4}, 2));
  EXPECT_EQ(std::string_view(p.parse(third->body())["data"].at(0)["id"]), "tiny");
}

TEST_F(http_server_test, a_client_that_goes_away_mid_stream_cancels_its_request) {
  start(1024);
  rt_->runner->set_step_time(2ms);
  http_client c(port_);
  c.send(http::verb::post, "/v1/completions",
         R"({"prompt":[3,1],"max_tokens":3000,"stream":true})");
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
  const response res =
    c.post("/v1/chat/completions",
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

  const response stream =
    c.post("/v1/chat/completions",
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
  EXPECT_THAT(std::string(metrics[http::field::content_type]),
              HasSubstr("text/plain; version=0.0.4"));
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

// The OpenAI SDK's models.retrieve.
TEST_F(http_server_test, retrieves_the_served_model_by_name) {
  start();
  http_client c(port_);
  const response model = c.get("/v1/models/tiny");
  EXPECT_EQ(model.result_int(), 200);
  simdjson::dom::parser p;
  EXPECT_EQ(std::string_view(p.parse(model.body())["id"]), "tiny");
  EXPECT_EQ(std::string_view(p.parse(model.body())["object"]), "model");
  const response other = c.get("/v1/models/other");
  EXPECT_EQ(other.result_int(), 404);
  EXPECT_THAT(other.body(), HasSubstr("model_not_found"));
  EXPECT_EQ(c.post("/v1/models/tiny", "{}").result_int(), 405);
}

TEST_F(http_server_test, echoes_the_clients_request_id_or_makes_one) {
  start();
  http_client c(port_);
  c.send_raw("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-123\r\n\r\n");
  auto echoed = c.read();
  ASSERT_TRUE(echoed);
  EXPECT_EQ((*echoed)["x-request-id"], "abc-123");
  // None given, or one that is not a sane header value: a fresh one each time.
  c.send_raw("GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: " + std::string(200, 'a') +
             "\r\n\r\n");
  auto made = c.read();
  const response again = c.post("/v1/completions", R"({"prompt":[1],"max_tokens":1})");
  ASSERT_TRUE(made);
  EXPECT_EQ((*made)["x-request-id"].size(), 16u);
  EXPECT_EQ(again["x-request-id"].size(), 16u);
  EXPECT_NE((*made)["x-request-id"], again["x-request-id"]);
}

TEST_F(http_server_test, shutdown_ends_a_live_stream_as_aborted_then_closes) {
  start(1024);
  rt_->runner->set_step_time(1ms);
  http_client c(port_);
  c.send(http::verb::post, "/v1/completions",
         R"({"prompt":[1,2],"max_tokens":1500,"stream":true})");
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
