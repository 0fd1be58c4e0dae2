// model_runner on the CUDA device (through the CUDA shim, or on a GPU) against the same
// runner on the CPU: copy-on-write copies, swaps and steps give the same
// greedy tokens; sampled rows with every filter, penalties, a logit_bias
// and logprobs, sampled on the device, give the CPU sampler's tokens. The
// CUDA attention takes head_dim 64 or 128, so the model is tiny_serving's
// with heads of 64.
#include "actors/runner/model_runner.hpp"
#if KVACTOR_CUDA_SHIM
#include "kernels/cuda_shim/shim.hpp"
#endif
#include "cuda_or_skip.hpp"
#include "tiny_serving.hpp"

#include <gtest/gtest.h>

#include <future>
#include <set>

namespace kvactor {
namespace {

using testing::tokens;

// bf16: bf16 matrices (on the CUDA device too) with bf16 activations, and a bf16 KV cache.
std::shared_ptr<model_runner> make_runner(const std::string& device, bool bf16 = false,
                                          int64_t max_sample_edits = 0) {
  auto m =
    model::load_model_folder(testing::model_dir(64), bf16 ? model::dtype::bf16 : model::dtype::f32);
  EXPECT_TRUE(m.has_value());
  model_runner_options o;
  o.device = device;
  if (bf16) {
    o.activations = model::dtype::bf16;
    o.kv_dtype = kernels::dtype::bf16;
  }
  o.kv_cache_bytes = 32 * 32768; // 32 blocks of 16 tokens (2 layers, 2 KV heads of 64, fp32)
  o.swap_bytes = 8 * 32768;
  o.max_num_batched_tokens = 128;
  o.max_num_seqs = 8;
  o.num_threads = 1;
  o.max_sample_edits = max_sample_edits;
  auto r = model_runner::create(m->config, std::move(m->weights), o);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return std::move(r).value();
}

step_output run_step(model_runner& r, step_plan plan) {
  std::promise<step_output> p;
  r.run(std::move(plan), [&p](step_output out) { p.set_value(std::move(out)); });
  return p.get_future().get();
}

std::vector<token_id> run(model_runner& r, step_plan plan) {
  std::vector<token_id> sampled;
  for (const auto& s : run_step(r, std::move(plan)).sampled) sampled.push_back(s.token);
  return sampled;
}

void swap(model_runner& r, swap_direction d, std::vector<block_copy> copies) {
  std::promise<void> p;
  r.swap(d, std::move(copies), [&p] { p.set_value(); });
  p.get_future().get();
}

scheduled_sequence seq(seq_id id, int32_t start, std::vector<token_id> toks, table_delta blocks) {
  scheduled_sequence s;
  s.id = id;
  s.start = start;
  s.tokens = std::move(toks);
  s.blocks = std::move(blocks);
  s.sample = true;
  s.sampling.temperature = 0.0f; // greedy
  return s;
}

// Prefill A into blocks 2, 3; fork B off A with a copy of block 3 into 7;
// swap B's blocks out and back into other blocks; one more step for both.
std::vector<std::vector<token_id>> script(model_runner& r) {
  std::vector<std::vector<token_id>> out;
  const auto prompt = tokens(20, 3);
  out.push_back(run(r, {1, {}, {seq(1, 0, prompt, {0, {2, 3}})}, {}}));
  const token_id a = out.back().at(0), b = (a + 1) % 400;
  step_plan fork{2, {{3, 7}}, {}, {}};
  fork.seqs.push_back(seq(1, 20, {a}, {2, {}}));
  fork.seqs.push_back(seq(2, 20, {b}, {0, {2, 7}}));
  out.push_back(run(r, std::move(fork)));
  swap(r, swap_direction::out, {{7, 1}});
  swap(r, swap_direction::in, {{1, 9}});
  step_plan next{3, {}, {}, {}};
  next.seqs.push_back(seq(1, 21, {out.back().at(0)}, {2, {}}));
  next.seqs.push_back(seq(2, 21, {out.back().at(1)}, {1, {9}}));
  out.push_back(run(r, std::move(next)));
  return out;
}

// Two sequences sampled for six steps with min_p, top_k, top_p, penalties,
// a logit_bias, min_tokens and logprobs; the second joins at step 3.
// Returns each step's tokens and logprobs.
std::vector<sampled_token> sampled_script(model_runner& r) {
  const auto sampled = [](scheduled_sequence s, int32_t num_output, bool first) {
    s.sampling = {.temperature = 0.8f, .top_k = 30, .top_p = 0.9f, .seed = 5 + s.id,
                  .min_p = 0.01f, .presence_penalty = 0.3f, .frequency_penalty = 0.2f,
                  .repetition_penalty = 1.2f, .logit_bias = {{7, 3.0f}, {11, -50.0f}},
                  .min_tokens = 3, .min_tokens_banned = {13}};
    s.num_output_tokens = num_output;
    s.num_logprobs = 3;
    if (first) s.history_prompt = s.tokens;
    return s;
  };
  std::vector<sampled_token> out;
  const auto prompt_1 = tokens(20, 3), prompt_2 = tokens(12, 5);
  token_id last_1 = 0, last_2 = 0;
  for (int32_t step = 0; step < 6; ++step) {
    step_plan p{uint64_t(step + 1), {}, {}, {}};
    p.seqs.push_back(step == 0 ? sampled(seq(1, 0, prompt_1, {0, {2, 3}}), 0, true)
                               : sampled(seq(1, 19 + step, {last_1}, {2, {}}), step, false));
    if (step == 2) p.seqs.push_back(sampled(seq(2, 0, prompt_2, {0, {5}}), 0, true));
    if (step > 2) p.seqs.push_back(sampled(seq(2, 9 + step, {last_2}, {1, {}}), step - 2, false));
    const step_output o = run_step(r, std::move(p));
    last_1 = o.sampled.at(0).token;
    if (step >= 2) last_2 = o.sampled.at(1).token;
    out.insert(out.end(), o.sampled.begin(), o.sampled.end());
  }
  return out;
}

TEST(model_runner_cuda, sampled_rows_with_every_filter_match_the_cpu_sampler) {
  KVACTOR_CUDA_OR_SKIP();
  const auto want = sampled_script(*make_runner("cpu"));
  auto cuda = make_runner("cuda");
  const auto got = sampled_script(*cuda);
  EXPECT_EQ(cuda->num_steps_sampled_on_host(), 0);
  ASSERT_EQ(got.size(), want.size());
  std::set<token_id> seen;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id);
    EXPECT_EQ(got[i].token, want[i].token) << "row " << i;
    seen.insert(want[i].token);
    EXPECT_NEAR(got[i].logprobs.logprob, want[i].logprobs.logprob, 1e-3) << "row " << i;
    ASSERT_EQ(got[i].logprobs.top.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(got[i].logprobs.top[k].token, want[i].logprobs.top[k].token);
      EXPECT_NEAR(got[i].logprobs.top[k].logprob, want[i].logprobs.top[k].logprob, 1e-3);
    }
  }
  EXPECT_GT(seen.size(), 3u); // sampled, not one token over and over
}

#if KVACTOR_CUDA_SHIM
// A step whose rows need more logit edits than the device sampler holds is
// sampled on the host from its logits, with the same tokens.
TEST(model_runner_cuda, a_step_whose_edits_overflow_the_device_sampler_samples_on_the_host) {
  const auto want = sampled_script(*make_runner("cpu"));
  auto small = make_runner("cuda", false, 24);
  const auto got = sampled_script(*small);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i].token, want[i].token) << "row " << i;
  // 20 prompt tokens and 2 biases fit in 24 edits only while nothing is
  // generated; the second sequence's rows add its own.
  EXPECT_GT(small->num_steps_sampled_on_host(), 0);
  EXPECT_LT(small->num_steps_sampled_on_host(), 6);
}
#endif

#if KVACTOR_CUDA_SHIM
// A step costs the device one round trip to a host thread, its completion,
// also with copy-on-write copies: the staging buffers are written when the
// step is enqueued (steps run one at a time).
TEST(model_runner_cuda, a_step_makes_one_host_round_trip) {
  auto r = make_runner("cuda");
  uint64_t before = cuda_shim::num_host_functions();
  const auto first = run(*r, {1, {}, {seq(1, 0, tokens(20, 3), {0, {2, 3}})}, {}});
  EXPECT_EQ(cuda_shim::num_host_functions() - before, 1u);
  step_plan fork{2, {{3, 7}}, {}, {}};
  fork.seqs.push_back(seq(1, 20, {first.at(0)}, {2, {}}));
  fork.seqs.push_back(seq(2, 20, {first.at(0)}, {0, {2, 7}}));
  before = cuda_shim::num_host_functions();
  EXPECT_EQ(run(*r, std::move(fork)).size(), 2u);
  EXPECT_EQ(cuda_shim::num_host_functions() - before, 1u);
}

// kv_cache_bytes 0 on a GPU: the pool fills what gpu_memory_utilization of
// the device's memory leaves once the weights and the pass's buffers are in
// (the shim's device has 80 GiB; 1/1024 of it is 80 MiB, of which the
// pass's buffers and the cuBLAS workspace take about 37).
model_runner_options automatic(double utilization) {
  model_runner_options o;
  o.device = "cuda";
  o.kv_cache_bytes = 0;
  o.gpu_memory_utilization = utilization;
  o.max_num_batched_tokens = 128;
  o.max_num_seqs = 8;
  o.num_threads = 1;
  return o;
}

TEST(model_runner_cuda, an_automatic_pool_fills_the_share_of_gpu_memory_that_is_left) {
  auto m = model::load_model_folder(testing::model_dir(64), model::dtype::f32);
  ASSERT_TRUE(m.has_value());
  const double utilization = 1.0 / 1024;
  auto r = model_runner::create(m->config, std::move(m->weights), automatic(utilization));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  const auto used = static_cast<double>(total - free);
  const double allowed = utilization * static_cast<double>(total);
  const double block = 32768; // one block of all layers (make_runner)
  EXPECT_LE(used, allowed);
  EXPECT_GT(used + block, allowed); // not a block more would fit
  EXPECT_GT((*r)->num_device_blocks(), 256);
}

TEST(model_runner_cuda, a_share_of_gpu_memory_the_weights_fill_is_an_error_naming_it) {
  auto m = model::load_model_folder(testing::model_dir(64), model::dtype::f32);
  ASSERT_TRUE(m.has_value());
  auto r = model_runner::create(m->config, std::move(m->weights), automatic(1e-6));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("gpu_memory_utilization 0.000001 allows 0 MiB of 81920 MiB"),
            std::string::npos)
    << r.error().message;
}
#endif

TEST(model_runner_cuda, copies_swaps_and_steps_match_the_cpu_runner) {
  KVACTOR_CUDA_OR_SKIP();
  const auto want = script(*make_runner("cpu"));
  const auto got = script(*make_runner("cuda"));
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 3u);
  EXPECT_EQ(want[1].size(), 2u);
}

// The same script in bf16: the copy-on-write copy and the swaps move bf16
// blocks (half the bytes), and the tokens are the CPU runner's in bf16.
TEST(model_runner_cuda, bf16_copies_swaps_and_steps_match_the_cpu_runner) {
  KVACTOR_CUDA_OR_SKIP();
  const auto want = script(*make_runner("cpu", true));
  const auto got = script(*make_runner("cuda", true));
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 3u);
  EXPECT_EQ(want[1].size(), 2u);
}

} // namespace
} // namespace kvactor
