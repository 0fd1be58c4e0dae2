// Completions of n choices over real loopback sockets: the prompt's blocks
// shared, each choice a request of one choice with its seed, prompt p's
// choice c at p * n + c.

#include "http_fixture.hpp"

#include "sse.hpp"

#include <set>

namespace kvactor::net {
namespace {

using namespace kvactor::net::testing;

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

} // namespace
} // namespace kvactor::net
