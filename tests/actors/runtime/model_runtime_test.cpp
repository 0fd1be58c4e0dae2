// The runtime serving a real (tiny) model end to end: kvactor::spawn_runtime
// from an engine_config, the model_runner over the CPU device, and greedy
// outputs compared with the paged forward pass run alone.

#include "actors/runtime/spawn.hpp"
#include "test_sink.hpp"
#include "kvactor/kvactor.hpp"
#include "model/forward/transformer.hpp"
#include "model/model_folder.hpp"
#include "model/sampler.hpp"
#include "model/tiny/tiny_model.hpp"
#include "model_runtime_fixture.hpp"
#include "tiny_serving.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <cmath>
#include <map>
#include <mutex>


namespace kvactor {
namespace {

using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using namespace std::chrono_literals;
using testing::greedy_alone;
using testing::model_dir;
using testing::tokens;

using testing::model_runtime;

TEST_F(model_runtime, concurrent_requests_match_the_forward_pass_alone) {
  start(engine_config{});
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 6; ++i) {
    auto prompt = tokens(3 + 11 * i, 13 * i + 1);
    sent.emplace_back(generate(prompt, 12), prompt);
  }
  for (auto& [id, prompt] : sent) {
    const done_event done = events_->wait_done(id);
    EXPECT_EQ(done.finish_reason, finish_reason::max_tokens);
    EXPECT_THAT(done.tokens, ElementsAreArray(greedy_alone(prompt, 12))) << "request " << id;
  }
  const runtime_figures f = figures();
  EXPECT_EQ(f.tokens_generated, 6 * 12);
  expect_idle();
}

// The tiny model is a bf16 checkpoint: bf16 matrices (auto keeps them) widen
// exactly, so every choice gives the tokens of the fp32 pass alone.
class model_runtime_weights : public model_runtime,
                              public ::testing::WithParamInterface<std::optional<number_format>> {};

TEST_P(model_runtime_weights, every_choice_gives_the_tokens_of_the_fp32_pass) {
  engine_config e;
  e.weights = GetParam();
  start(e);
  const auto prompt = tokens(40, 9);
  const request_id id = generate(prompt, 10);
  EXPECT_THAT(events_->wait_done(id).tokens, ElementsAreArray(greedy_alone(prompt, 10)));
  expect_idle();
}

INSTANTIATE_TEST_SUITE_P(choices, model_runtime_weights,
                         ::testing::Values(std::nullopt, number_format::f32, number_format::bf16),
                         [](const auto& p) { return p.param ? to_string(*p.param) : "auto"; });

// Matrices quantised at load: concurrent requests, batched together, each
// get the tokens of the quantised pass run alone (the integer products are
// batch-invariant too).
class model_runtime_quantised : public model_runtime,
                                public ::testing::WithParamInterface<number_format> {};

TEST_P(model_runtime_quantised, concurrent_requests_match_the_quantised_pass_alone) {
  engine_config e;
  e.weights = GetParam();
  start(e);
  const model::quant_format format = *model::parse_quant_format(to_string(GetParam()));
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 4; ++i) {
    auto prompt = tokens(5 + 13 * i, 7 * i + 2);
    sent.emplace_back(generate(prompt, 10), prompt);
  }
  for (auto& [id, prompt] : sent)
    EXPECT_THAT(events_->wait_done(id).tokens,
                ElementsAreArray(greedy_alone(prompt, 10, kernels::dtype::f32, 16,
                                              model::dtype::f32, format)))
      << "request " << id;
  expect_idle();
}

INSTANTIATE_TEST_SUITE_P(formats, model_runtime_quantised,
                         ::testing::Values(number_format::q8_0, number_format::q4_0,
                                           number_format::q5_0, number_format::q5_1),
                         [](const auto& p) { return std::string(to_string(p.param)); });

// Each token of a greedy request that asks for 3 logprobs is the most
// likely of its step, its logprob the top one's, the alternatives in order.
TEST_F(model_runtime, token_events_carry_the_models_logprobs_when_asked) {
  start(engine_config{});
  const auto prompt = tokens(20, 5);
  generate_request req;
  req.prompt_tokens = prompt;
  req.max_tokens = 6;
  req.ignore_eos = true;
  req.logprobs = 3;
  admission a;
  self_->request(rt_, caf::infinite, generate_atom::value, req, sink_)
    .receive([&](const admission& x) { a = x; },
             [&](const caf::error& e) { ADD_FAILURE() << sys_.render(e); });
  ASSERT_TRUE(a.ok()) << a.error_message;
  const request_id plain = generate(prompt, 2);
  EXPECT_THAT(events_->wait_done(a.id).tokens, ElementsAreArray(greedy_alone(prompt, 6)));
  events_->wait_done(plain);
  std::lock_guard lock(events_->mutex);
  const std::vector<token_event>& evs = events_->tokens[a.id];
  ASSERT_EQ(evs.size(), 6u);
  for (const token_event& ev : evs) {
    ASSERT_TRUE(ev.has_logprobs) << "token " << ev.index;
    ASSERT_EQ(ev.top_logprobs.size(), 3u);
    EXPECT_EQ(ev.top_logprobs[0].token, ev.token) << "greedy takes the most likely";
    EXPECT_EQ(ev.logprob.token, ev.token);
    EXPECT_EQ(ev.logprob.logprob, ev.top_logprobs[0].logprob);
    EXPECT_LT(ev.logprob.logprob, 0.0f);
    EXPECT_GE(ev.top_logprobs[0].logprob, ev.top_logprobs[1].logprob);
    EXPECT_GE(ev.top_logprobs[1].logprob, ev.top_logprobs[2].logprob);
    double mass = 0;
    for (const token_logprob& t : ev.top_logprobs)
      mass += std::exp(double(t.logprob));
    EXPECT_LE(mass, 1.0 + 1e-6);
  }
  for (const token_event& ev : events_->tokens[plain])
    EXPECT_FALSE(ev.has_logprobs);
}

TEST_F(model_runtime, a_prefix_cache_hit_gives_the_same_tokens) {
  start(engine_config{});
  const auto prompt = tokens(40, 21); // two full blocks of 16 can be reused
  const done_event first = events_->wait_done(generate(prompt, 10));
  const done_event second = events_->wait_done(generate(prompt, 10));
  EXPECT_EQ(first.cached_tokens, 0);
  EXPECT_GE(second.cached_tokens, 32);
  const auto want = greedy_alone(prompt, 10);
  EXPECT_THAT(first.tokens, ElementsAreArray(want));
  EXPECT_THAT(second.tokens, ElementsAreArray(want));
  expect_idle();
}

// (preemption, activations): bf16 activations keep batch invariance, so
// their outputs too stay those of the sequence alone.

class model_runtime_preemption
  : public model_runtime,
    public ::testing::WithParamInterface<std::tuple<preemption_mode, number_format>> {};

TEST_P(model_runtime_preemption, outputs_stay_identical_with_a_small_kv_pool) {
  engine_config e;
  e.preemption = std::get<0>(GetParam());
  e.activations = std::get<1>(GetParam());
  const model::dtype activations =
    e.activations == number_format::bf16 ? model::dtype::bf16 : model::dtype::f32;
  e.block_size = 4;
  // One block of this model (2 layers, K and V, 4 tokens, 2 KV heads of 32,
  // fp32) is 4 KiB: 12 device blocks, while each request grows to 9.
  e.kv_cache_bytes = 12 * 4096;
  e.swap_bytes = 64 * 4096;
  start(e);
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 4; ++i) {
    auto prompt = tokens(9, 100 * i + 3);
    sent.emplace_back(generate(prompt, 24), prompt);
  }
  int preemptions = 0;
  for (auto& [id, prompt] : sent) {
    const done_event done = events_->wait_done(id);
    EXPECT_THAT(done.tokens,
                ElementsAreArray(greedy_alone(prompt, 24, kernels::dtype::f32, 16, activations)))
      << "request " << id;
    preemptions += done.preemptions;
  }
  EXPECT_GT(preemptions, 0);
  expect_idle();
}

INSTANTIATE_TEST_SUITE_P(modes, model_runtime_preemption,
                         ::testing::Combine(
                           ::testing::Values(preemption_mode::swap, preemption_mode::recompute),
                           ::testing::Values(number_format::f32, number_format::bf16)),
                         [](const auto& p) {
                           return std::string(to_string(std::get<0>(p.param))) + "_" +
                                  to_string(std::get<1>(p.param)) + "_activations";
                         });

// A bf16 KV cache: K/V and attention rounded to bf16, batch-invariant like
// the fp32 cache, so with the same block size the outputs equal those of the
// bf16 pass run alone bit for bit, through preemption by swap (the bf16
// blocks go to the host pool and back) and by recompute.
class model_runtime_bf16_kv : public model_runtime,
                              public ::testing::WithParamInterface<preemption_mode> {
protected:
  // A bf16 runtime of 12 device blocks (one bf16 block of this model — 2
  // layers, K and V, 4 tokens, 2 KV heads of 32 — is 2 KiB) and
  // `host_blocks` host blocks.
  void start_bf16(preemption_mode mode, int32_t host_blocks) {
    engine_config e;
    e.kv_dtype = number_format::bf16;
    e.preemption = mode;
    e.block_size = 4;
    e.kv_cache_bytes = 12 * 2048;
    e.swap_bytes = int64_t{host_blocks} * 2048;
    start(e);
    const runtime_figures pools = figures();
    EXPECT_EQ(pools.device_blocks_total, 12);
    EXPECT_EQ(pools.host_blocks_total, host_blocks);
  }
  // Four requests that each grow to 9 blocks: each one's tokens must equal
  // the bf16 pass run alone. Returns their preemptions.
  int four_requests_as_alone(int32_t seed) {
    std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
    for (int i = 0; i < 4; ++i) {
      auto prompt = tokens(9, 100 * i + seed);
      sent.emplace_back(generate(prompt, 24), prompt);
    }
    int preemptions = 0;
    for (auto& [id, prompt] : sent) {
      const done_event done = events_->wait_done(id);
      EXPECT_THAT(done.tokens,
                  ElementsAreArray(greedy_alone(prompt, 24, kernels::dtype::bf16, 4)))
        << "request " << id;
      preemptions += done.preemptions;
    }
    return preemptions;
  }
};

TEST_P(model_runtime_bf16_kv, outputs_equal_the_bf16_pass_alone_through_preemption) {
  start_bf16(GetParam(), 64);
  EXPECT_GT(four_requests_as_alone(3), 0);
  expect_idle();
}

INSTANTIATE_TEST_SUITE_P(modes, model_runtime_bf16_kv,
                         ::testing::Values(preemption_mode::swap, preemption_mode::recompute),
                         [](const auto& p) { return to_string(p.param); });

// A host pool with room for one grown request, under memory pressure:
// whether a swap-out finds room there depends on when each comes, and the
// outputs stay those of each request alone either way.
TEST_F(model_runtime_bf16_kv, a_short_host_pool_recomputes_what_it_cannot_hold) {
  start_bf16(preemption_mode::swap, 10);
  EXPECT_GT(four_requests_as_alone(7), 1);
  expect_idle();
}

// A host pool smaller than the request: the scheduler does not ask the swap
// actor for a swap-out that could never fit (no refusal), it recomputes the
// request at once, and the tokens stay those of the request alone.
TEST_F(model_runtime_bf16_kv, a_request_larger_than_the_host_pool_is_recomputed_at_once) {
  engine_config e;
  e.kv_dtype = number_format::bf16;
  e.preemption = preemption_mode::swap;
  e.block_size = 4;
  e.kv_cache_bytes = 32 * 2048;
  e.swap_bytes = 2 * 2048; // the prompt alone takes 3 blocks
  start(e);
  const auto prompt = tokens(9, 11);
  // NOTE: 100 tokens: the preemption, sent after the first, meets the
  // request still running however late it comes.
  const request_id id = generate(prompt, 100);
  events_->wait_tokens(id, 1);
  caf::anon_send(rt_, preempt_atom::value, id, true);
  const done_event done = events_->wait_done(id);
  EXPECT_THAT(done.tokens, ElementsAreArray(greedy_alone(prompt, 100, kernels::dtype::bf16, 4)));
  EXPECT_EQ(done.preemptions, 1);
  const runtime_figures f = figures();
  EXPECT_EQ(f.preemptions, 1);
  EXPECT_EQ(f.preemptions_by_swap, 0);
  EXPECT_EQ(f.swap_outs_refused, 0);
  expect_idle();
}

TEST_F(model_runtime, a_bf16_kv_cache_holds_twice_the_blocks_of_an_f32_one) {
  std::map<number_format, runtime_figures> pools;
  for (number_format kv : {number_format::f32, number_format::bf16}) {
    engine_config e;
    e.kv_dtype = kv;
    e.kv_cache_bytes = 1 << 20;
    e.swap_bytes = 1 << 19;
    start(e);
    pools[kv] = figures();
    const request_id id = generate(tokens(20, 4), 4); // it serves
    EXPECT_EQ(events_->wait_done(id).finish_reason, finish_reason::max_tokens);
    expect_idle();
    stop();
  }
  const runtime_figures& f32 = pools[number_format::f32];
  const runtime_figures& bf16 = pools[number_format::bf16];
  EXPECT_GT(f32.device_blocks_total, 0);
  EXPECT_EQ(bf16.device_blocks_total, 2 * f32.device_blocks_total);
  EXPECT_EQ(bf16.host_blocks_total, 2 * f32.host_blocks_total);
}

TEST_F(model_runtime, forced_swaps_keep_outputs_exact) {
  start(engine_config{});
  std::vector<std::pair<request_id, std::vector<int32_t>>> sent;
  for (int i = 0; i < 3; ++i) {
    auto prompt = tokens(20, 31 * i + 2);
    sent.emplace_back(generate(prompt, 30), prompt);
  }
  for (int i = 0; i < 6; ++i) caf::anon_send(rt_, preempt_atom::value, request_id{0}, i % 2 == 0);
  for (auto& [id, prompt] : sent)
    EXPECT_THAT(events_->wait_done(id).tokens, ElementsAreArray(greedy_alone(prompt, 30)))
      << "request " << id;
  EXPECT_GE(figures().preemptions, 1);
  expect_idle();
}

// n sampled choices of one prompt (computed once, its blocks shared) give
// the tokens of n requests of one choice with seeds seed + c, under swap
// and recompute preemption too.
TEST_F(model_runtime, choices_give_the_tokens_of_requests_with_their_seeds) {
  engine_config e;
  e.block_size = 4;
  // Blocks of 4 KiB (see above). Each sequence grows to 16; the choices
  // together to 9 shared + 4 x 7 (request_blocks.hpp), beside the solo
  // requests, so that they preempt.
  e.kv_cache_bytes = 40 * 4096;
  e.swap_bytes = 128 * 4096;
  for (preemption_mode mode : {preemption_mode::swap, preemption_mode::recompute}) {
    e.preemption = mode;
    start(e);
    generate_request req;
    req.prompt_tokens = tokens(38, 3); // nine full blocks and a partial one before the fork
    req.max_tokens = 24;
    req.ignore_eos = true;
    req.temperature = 0.9f;
    req.seed = 41;
    req.n = 4;
    std::vector<generate_request> sent{req};
    for (int32_t c = 0; c < 4; ++c) {
      generate_request one = req;
      one.n = 1;
      one.seed = 41 + uint64_t(c);
      sent.push_back(one);
    }
    // NOTE: all at once, and one preemption forced as well: under load the
    // choices could end before the solo requests come (nothing would run
    // short of blocks); the last admitted still has its 24 steps to run.
    const std::vector<request_id> ids = generate_all(sent);
    caf::anon_send(rt_, preempt_atom::value, request_id{0}, mode == preemption_mode::swap);
    const request_id id = ids[0];
    const std::vector<request_id> solo(ids.begin() + 1, ids.end());
    const auto choices = events_->wait_choices(id, 4);
    for (int32_t c = 0; c < 4; ++c) {
      EXPECT_EQ(choices[size_t(c)].finish_reason, finish_reason::max_tokens);
      EXPECT_THAT(choices[size_t(c)].tokens,
                  ElementsAreArray(events_->wait_done(solo[size_t(c)]).tokens))
        << to_string(mode) << ", choice " << c;
    }
    EXPECT_NE(choices[0].tokens, choices[1].tokens) << to_string(mode);
    EXPECT_GT(figures().preemptions, 0) << to_string(mode);
    expect_idle();
    stop();
  }
}

TEST_F(model_runtime, cancel_returns_every_block) {
  start(engine_config{});
  const request_id a = generate(tokens(30, 5), 900);
  const request_id b = generate(tokens(8, 9), 900);
  caf::anon_send(rt_, cancel_atom::value, a);
  caf::anon_send(rt_, cancel_atom::value, b);
  EXPECT_EQ(events_->wait_done(a).finish_reason, finish_reason::aborted);
  EXPECT_EQ(events_->wait_done(b).finish_reason, finish_reason::aborted);
  expect_idle();
}

} // namespace
} // namespace kvactor
