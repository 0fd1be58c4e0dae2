// Sampled requests with the sampling fields users send, served end to end on
// the tiny model: a request's tokens are those it gets alone, through swap
// and recompute preemption and as one of n choices; stop_token_ids and
// min_tokens end a choice where they say.

#include "model_runtime_fixture.hpp"

#include <algorithm>
#include <string>

namespace kvactor {
namespace {

using ::testing::ElementsAreArray;
using testing::greedy_alone;
using testing::model_runtime;
using testing::small_pool;
using testing::tokens;

// Every filter and penalty at once; token 7 banned by its bias.
generate_request penalised(std::vector<int32_t> prompt, uint64_t seed) {
  generate_request r;
  r.prompt_tokens = std::move(prompt);
  r.max_tokens = 24;
  r.ignore_eos = true;
  r.temperature = 0.9f;
  r.top_p = 0.9f;
  r.top_k = 50;
  r.min_p = 0.02f;
  r.presence_penalty = 0.5f;
  r.frequency_penalty = 0.3f;
  r.repetition_penalty = 1.2f;
  r.logit_bias = {{5, 2.0f}, {7, -100.0f}};
  r.seed = seed;
  return r;
}

TEST_F(model_runtime, penalised_sampled_requests_keep_their_tokens_through_preemption) {
  std::vector<generate_request> reqs;
  for (int i = 0; i < 4; ++i)
    reqs.push_back(penalised(tokens(9, 100 * i + 3), 17 + uint64_t(i)));
  engine_config roomy = small_pool(preemption_mode::swap);
  roomy.kv_cache_bytes = 256 * 4096;
  start(roomy);
  std::vector<std::vector<int32_t>> alone;
  for (const generate_request& r : reqs)
    alone.push_back(events_->wait_done(generate(r)).tokens);
  stop();
  EXPECT_NE(alone[0], alone[1]);
  for (const auto& t : alone)
    EXPECT_EQ(std::ranges::count(t, 7), 0); // its bias bans it

  for (preemption_mode mode : {preemption_mode::swap, preemption_mode::recompute}) {
    start(small_pool(mode));
    std::vector<request_id> ids;
    for (const generate_request& r : reqs)
      ids.push_back(generate(r));
    int preemptions = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const done_event done = events_->wait_done(ids[i]);
      EXPECT_THAT(done.tokens, ElementsAreArray(alone[i])) << to_string(mode) << ", request " << i;
      preemptions += done.preemptions;
    }
    EXPECT_GT(preemptions, 0) << to_string(mode);
    expect_idle();
    stop();
  }
}

TEST_F(model_runtime, penalised_choices_give_the_tokens_of_requests_with_their_seeds) {
  engine_config e = small_pool(preemption_mode::recompute);
  e.kv_cache_bytes = 30 * 4096;
  start(e);
  generate_request req = penalised(tokens(38, 3), 41);
  req.n = 3;
  const request_id id = generate(req);
  std::vector<request_id> solo;
  for (int32_t c = 0; c < 3; ++c) {
    generate_request one = req;
    one.n = 1;
    one.seed = 41 + uint64_t(c);
    solo.push_back(generate(one));
  }
  const auto choices = events_->wait_choices(id, 3);
  for (int32_t c = 0; c < 3; ++c)
    EXPECT_THAT(choices[size_t(c)].tokens,
                ElementsAreArray(events_->wait_done(solo[size_t(c)]).tokens))
      << "choice " << c;
  expect_idle();
}

TEST_F(model_runtime, a_stop_token_id_ends_the_choice_and_min_tokens_holds_it_off) {
  const auto prompt = tokens(12, 5);
  const auto greedy = greedy_alone(prompt, 16);
  // The first token not generated before it: the greedy run's end there.
  size_t at = 1;
  while (at < greedy.size() && std::find(greedy.begin(), greedy.begin() + ptrdiff_t(at),
                                         greedy[at]) != greedy.begin() + ptrdiff_t(at))
    ++at;
  ASSERT_LT(at, greedy.size());
  const int32_t stop_id = greedy[at];
  start(engine_config{});
  generate_request req;
  req.prompt_tokens = prompt;
  req.max_tokens = 16;
  req.ignore_eos = true;
  req.stop_token_ids = {stop_id};
  const done_event ended = events_->wait_done(generate(req));
  EXPECT_EQ(ended.finish_reason, finish_reason::stop);
  EXPECT_THAT(ended.tokens, ElementsAreArray(greedy.begin(), greedy.begin() + ptrdiff_t(at) + 1));

  req.min_tokens = int32_t(at) + 2;
  const done_event held = events_->wait_done(generate(req));
  ASSERT_GE(held.tokens.size(), size_t(req.min_tokens));
  EXPECT_EQ(std::count(held.tokens.begin(), held.tokens.begin() + req.min_tokens, stop_id), 0);
  EXPECT_THAT(std::vector<int32_t>(held.tokens.begin(), held.tokens.begin() + ptrdiff_t(at)),
              ElementsAreArray(greedy.begin(), greedy.begin() + ptrdiff_t(at)));
  if (held.finish_reason == finish_reason::stop) {
    EXPECT_EQ(held.tokens.back(), stop_id);
  }
  expect_idle();
}

TEST_F(model_runtime, logits_of_nan_end_each_choice_with_an_error_and_no_token) {
  engine_config e;
  e.model_dir = testing::nan_model_dir().string();
  start(e);
  std::vector<generate_request> requests = testing::greedy_and_sampled(tokens(9, 1));
  requests.push_back(penalised(tokens(9, 1), 8));
  generate_request constrained = requests[1];
  constrained.constraint = {constraint_kind::regex, "[a-z]+", {}};
  requests.push_back(constrained);
  for (const generate_request& req : requests)
    testing::expect_no_finite_logit(events_->wait_done(generate(req)));
  expect_idle();
}

TEST_F(model_runtime, figures_count_the_time_spent_sampling) {
  start(engine_config{});
  EXPECT_EQ(figures().sampling_seconds, 0.0);
  (void)events_->wait_done(generate(penalised(tokens(9, 1), 3)));
  const runtime_figures f = figures();
  EXPECT_GT(f.sampling_seconds, 0.0);
  EXPECT_LE(f.sampling_seconds, f.forward_seconds);
}

} // namespace
} // namespace kvactor
