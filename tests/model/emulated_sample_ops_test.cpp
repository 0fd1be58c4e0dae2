// The device's sampler (kernels/cuda/sample_ops.cuh) run through the CUDA
// emulator on rows packed by device_sampling_batch, against the CPU sampler
// and logprobs on the same logits, parameters, seeds and histories.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cuda/sample_ops.cuh"
#include "model/device_sampling.hpp"
#include "model/logprobs.hpp"
#include "model/rng.hpp"
#include "model/sampler.hpp"

namespace kvactor::model {
namespace {

namespace gpu = kernels::gpu;

struct row_case {
  std::vector<float> logits;
  sampling_params params;
  uint64_t step = 0;
  const sampling_history* history = nullptr;
  int32_t num_logprobs = -1;
};

// Logits like a model's: a few strong candidates over a long flat tail.
std::vector<float> model_like(int32_t n, uint64_t seed) {
  rng r(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x)
    v = float(r.normal()) * 2.0f;
  for (int i = 0; i < 8; ++i)
    x[r.next() % size_t(n)] += 8.0f + float(i);
  return x;
}

// NOTE: the launchers' sample_threads (1024) in one test; the emulator
// switches between every simulated thread at each barrier, so the others
// run 128 threads per row.
template <int threads = 128>
std::vector<gpu::sampled_row> run_on_device(const std::vector<row_case>& cases) {
  const auto n = static_cast<int32_t>(cases.front().logits.size());
  device_sampling_batch batch;
  std::vector<float> logits;
  for (const row_case& c : cases) {
    batch.add(c.params, c.step, c.history, c.num_logprobs, n);
    logits.insert(logits.end(), c.logits.begin(), c.logits.end());
  }
  std::vector<gpu::logit_edit> edits(batch.edits().begin(), batch.edits().end());
  std::vector<gpu::sampled_row> out(cases.size());
  const dim3 grid(static_cast<unsigned>(cases.size()));
  emu::launch(grid, dim3(threads), gpu::logprobs_kernel<threads>,
              static_cast<const float*>(logits.data()), n, batch.rows().data(), out.data());
  emu::launch(grid, dim3(gpu::edit_threads), gpu::adjust_kernel, logits.data(), n,
              batch.rows().data(), edits.data());
  emu::launch(grid, dim3(threads), gpu::sample_kernel<threads>,
              static_cast<const float*>(logits.data()), n, batch.rows().data(),
              static_cast<const gpu::logit_edit*>(edits.data()), out.data());
  return out;
}

// Equal, or within 1e-4 (sums in another order).
void expect_logprob(float got, float want) {
  if (std::isinf(want))
    EXPECT_EQ(got, want);
  else
    EXPECT_NEAR(got, want, 1e-4);
}

template <int threads = 128>
void expect_same_as_the_cpu(const std::vector<row_case>& cases) {
  const std::vector<gpu::sampled_row> out = run_on_device<threads>(cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    const row_case& c = cases[i];
    const token_id want = sample(c.logits, c.params, c.step, c.history);
    EXPECT_EQ(out[i].token, want) << "row " << i;
    if (c.num_logprobs < 0)
      continue;
    const token_logprobs l = logprobs(c.logits, want, c.num_logprobs);
    const token_logprobs got =
      logprobs_of(out[i], c.num_logprobs, static_cast<int32_t>(c.logits.size()));
    expect_logprob(got.logprob, l.logprob);
    ASSERT_EQ(got.top.size(), l.top.size());
    for (size_t k = 0; k < l.top.size(); ++k) {
      EXPECT_EQ(got.top[k].token, l.top[k].token) << "row " << i << " alternative " << k;
      expect_logprob(got.top[k].logprob, l.top[k].logprob);
    }
  }
}

sampling_params sampled(float temperature, float top_p, int32_t top_k, float min_p,
                        uint64_t seed) {
  sampling_params p;
  p.temperature = temperature;
  p.top_p = top_p;
  p.top_k = top_k;
  p.min_p = min_p;
  p.seed = seed;
  return p;
}

TEST(emulated_sample_ops, greedy_rows_take_the_cpu_argmax) {
  std::vector<row_case> cases;
  for (uint64_t s = 0; s < 4; ++s)
    cases.push_back({model_like(3001, s), sampling_params{.temperature = 0.0f}});
  cases[1].logits[17] = cases[1].logits[2000] = 1e4f; // a tie: the lower id
  cases[2].logits.assign(3001, std::numeric_limits<float>::quiet_NaN());
  cases[3].logits.assign(3001, -INFINITY);
  cases[3].logits[5] = std::numeric_limits<float>::quiet_NaN();
  expect_same_as_the_cpu(cases);
}

TEST(emulated_sample_ops, each_filter_draws_the_cpu_token) {
  const struct {
    float temperature, top_p;
    int32_t top_k;
    float min_p;
  } filters[] = {{1.0f, 1.0f, 0, 0.0f},   {0.8f, 0.95f, 0, 0.0f}, {0.7f, 1.0f, 40, 0.0f},
                 {1.0f, 1.0f, 0, 0.05f},  {0.9f, 0.9f, 50, 0.0f}, {1.2f, 0.8f, 500, 0.01f},
                 {0.6f, 0.5f, 0, 0.0f},   {1.0f, 0.99f, 3000, 0.0f}};
  std::vector<row_case> cases;
  uint64_t seed = 11;
  for (const auto& f : filters)
    for (int32_t n : {4099, 32000})
      for (uint64_t step : {0u, 7u}) {
        cases.push_back({model_like(n, seed), sampled(f.temperature, f.top_p, f.top_k, f.min_p,
                                                      seed), step});
        ++seed;
      }
  // NOTE: rows of one vocabulary per launch, as a model's step.
  std::vector<row_case> small, large;
  for (row_case& c : cases)
    (c.logits.size() == 4099 ? small : large).push_back(std::move(c));
  expect_same_as_the_cpu(small);
  expect_same_as_the_cpu(large);
}

TEST(emulated_sample_ops, rows_of_the_launchers_block_size_draw_the_cpu_token) {
  std::vector<row_case> cases;
  for (uint64_t s = 0; s < 3; ++s)
    cases.push_back({model_like(20000, 300 + s), sampled(0.8f, 0.95f, s == 1 ? 40 : 0,
                                                         s == 2 ? 0.02f : 0.0f, s), s, nullptr,
                     s == 0 ? 5 : -1});
  expect_same_as_the_cpu<gpu::sample_threads>(cases);
}

TEST(emulated_sample_ops, flat_rows_and_ties_at_the_cut_follow_the_id_order) {
  std::vector<row_case> cases;
  // Every logit equal: top_k and top_p cut inside one run of ties.
  cases.push_back({std::vector<float>(5000, 0.5f), sampled(1.0f, 1.0f, 37, 0.0f, 3)});
  cases.push_back({std::vector<float>(5000, 0.5f), sampled(1.0f, 0.3f, 0, 0.0f, 4)});
  std::vector<float> steps(5000);
  for (size_t i = 0; i < steps.size(); ++i)
    steps[i] = float(i % 7); // seven levels, each tied many times
  cases.push_back({steps, sampled(1.0f, 0.5f, 0, 0.0f, 5)});
  cases.push_back({steps, sampled(0.5f, 1.0f, 1000, 0.0f, 6)});
  cases.push_back({steps, sampled(1.0f, 0.9f, 0, 0.2f, 7)});
  for (uint64_t s = 0; s < 12; ++s)
    cases.push_back({steps, sampled(1.0f, 0.7f, 900, 0.0f, 100 + s), s});
  expect_same_as_the_cpu(cases);
}

TEST(emulated_sample_ops, bias_bans_and_penalties_change_the_row_as_on_the_cpu) {
  sampling_history history(std::vector<token_id>{4, 9, 9, 120, 3000});
  for (token_id t : {9, 9, 9, 77, 400, 400})
    history.add_output(t);
  std::vector<row_case> cases;
  const std::vector<float> x = model_like(4099, 42);
  sampling_params p = sampled(0.9f, 0.95f, 0, 0.0f, 9);
  p.logit_bias = {{77, 4.5f}, {5, -100.0f}, {4000, 100.0f}};
  p.min_tokens = 3;
  p.min_tokens_banned = {2, 4000};
  p.repetition_penalty = 1.3f;
  p.frequency_penalty = 0.4f;
  p.presence_penalty = 0.25f;
  for (uint64_t step : {0u, 2u, 3u, 5u}) {
    cases.push_back({x, p, step, &history, 5});
    sampling_params g = p;
    g.temperature = 0.0f;
    cases.push_back({x, g, step, &history, 0});
  }
  // The history's tokens hold the row's top logits: penalties strong enough
  // push each of them (prompt and output alike) below the rest.
  std::vector<float> top = model_like(4099, 43);
  for (token_id t : {4, 9, 120, 3000, 77, 400})
    top[size_t(t)] = 40.0f;
  sampling_params strong;
  strong.temperature = 0.0f;
  strong.repetition_penalty = 4.0f; // 40 -> 10
  strong.frequency_penalty = 0.5f;  // output tokens: 10 - 0.5 * count
  cases.push_back({top, strong, 0, &history, -1});
  strong.temperature = 0.5f;
  cases.push_back({top, strong, 0, &history, -1});
  expect_same_as_the_cpu(cases);
  const auto out = run_on_device(cases);
  // The bias makes 4000 the greedy token once min_tokens allows it.
  EXPECT_NE(out[1].token, 4000);
  EXPECT_EQ(out[5].token, 4000);
  for (token_id t : {4, 9, 120, 3000, 77, 400}) {
    EXPECT_NE(out[8].token, t);
    EXPECT_NE(out[9].token, t);
  }
}

TEST(emulated_sample_ops, logprobs_are_those_of_the_unchanged_row) {
  std::vector<row_case> cases;
  std::vector<float> with_nan = model_like(3000, 5);
  with_nan[10] = with_nan[11] = std::numeric_limits<float>::quiet_NaN();
  with_nan[12] = -INFINITY;
  cases.push_back({with_nan, sampled(1.0f, 1.0f, 0, 0.0f, 1), 0, nullptr, 20});
  std::vector<float> tiny = {1.0f, std::numeric_limits<float>::quiet_NaN(), -INFINITY, 1.0f};
  tiny.resize(3000, -INFINITY); // fewer numbers above -inf than alternatives asked
  cases.push_back({tiny, sampled(0.0f, 1.0f, 0, 0.0f, 1), 0, nullptr, 20});
  sampling_params biased = sampled(0.0f, 1.0f, 0, 0.0f, 2);
  biased.logit_bias = {{2999, 50.0f}};
  cases.push_back({model_like(3000, 6), biased, 0, nullptr, 3});
  expect_same_as_the_cpu(cases);
  EXPECT_EQ(run_on_device(cases)[2].token, 2999);
}

TEST(emulated_sample_ops, a_row_draws_the_same_beside_any_other_rows) {
  const row_case lone{model_like(4099, 77), sampled(0.8f, 0.95f, 0, 0.0f, 5), 3};
  const token_id alone = run_on_device({lone})[0].token;
  std::vector<row_case> batch;
  for (uint64_t s = 0; s < 5; ++s)
    batch.push_back({model_like(4099, 200 + s), sampled(1.0f, 0.5f, 10, 0.0f, s), s});
  batch.insert(batch.begin() + 2, lone);
  EXPECT_EQ(run_on_device(batch)[2].token, alone);
}

} // namespace
} // namespace kvactor::model
