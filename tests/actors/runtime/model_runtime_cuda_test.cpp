// The runtime end to end on the CUDA device (the CUDA shim, or a GPU): steps
// on the compute stream, swaps on their own streams at the same time,
// completions from host functions into the actors. A KV pool too small for
// the requests forces preemption by swap; the outputs equal those of the
// runtime on the CPU device with room for everything.

#include "actors/runtime/spawn.hpp"
#include "kvactor/kvactor.hpp"
#include "test_sink.hpp"
#include "cuda_or_skip.hpp"
#include "tiny_serving.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace kvactor {
namespace {

using ::testing::IsEmpty;
using testing::collector;
using testing::sink_fn;
using testing::test_config;
using testing::tokens;

// The tokens of each request, and the preemptions they went through.
struct outcome {
  std::vector<std::vector<int32_t>> tokens;
  int32_t num_preemptions = 0;
  int32_t device_blocks_total = 0;
};

outcome serve(engine_config e, const std::vector<std::vector<int32_t>>& prompts,
              int32_t max_tokens) {
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  e.model_dir = testing::model_dir(64).string();
  auto rt = spawn_runtime(sys, e);
  EXPECT_TRUE(rt) << sys.render(rt.error());
  if (!rt) return {};
  auto events = std::make_shared<collector>();
  auto sink = sys.spawn(sink_fn, events);
  std::vector<request_id> ids;
  for (const auto& p : prompts) {
    generate_request req;
    req.prompt_tokens = p;
    req.max_tokens = max_tokens;
    req.ignore_eos = true;
    self->request(*rt, caf::infinite, generate_atom::value, req, sink)
      .receive([&](const admission& a) { ids.push_back(a.id); },
               [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
  }
  outcome out;
  for (request_id id : ids) {
    const done_event done = events->wait_done(id);
    EXPECT_EQ(done.finish_reason, finish_reason::max_tokens);
    out.tokens.push_back(done.tokens);
    out.num_preemptions += done.preemptions;
  }
  self->request(*rt, caf::infinite, figures_atom::value)
    .receive(
      [&](const runtime_figures& f) {
        out.device_blocks_total = f.device_blocks_total;
        EXPECT_EQ(f.device_blocks_used, 0);
        EXPECT_EQ(f.host_blocks_free, f.host_blocks_total);
        EXPECT_THAT(f.broken_invariants, IsEmpty());
      },
      [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
  self->request(*rt, caf::infinite, shutdown_atom::value)
    .receive([](bool) {}, [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
  return out;
}

TEST(model_runtime_cuda, swap_preemption_on_the_cuda_device_keeps_the_outputs) {
  KVACTOR_CUDA_OR_SKIP();
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(tokens(20, 100 * i + 3));
  engine_config roomy;
  roomy.block_size = 16;
  roomy.num_threads = 1;
  // exact on both devices (auto is bf16 on CUDA: activations for a bf16
  // checkpoint, the KV cache always)
  roomy.activations = number_format::f32;
  roomy.kv_dtype = number_format::f32;
  const outcome want = serve(roomy, prompts, 40);

  engine_config tight = roomy;
  tight.device = "cuda";
  tight.preemption = preemption_mode::swap;
  // One block of this model (2 layers, K and V, 16 tokens, 2 KV heads of
  // 64, fp32) is 32 KiB: 9 device blocks, while each request grows to 4.
  tight.kv_cache_bytes = 9 * 32768;
  tight.swap_bytes = 32 * 32768;
  const outcome got = serve(tight, prompts, 40);
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_EQ(want.num_preemptions, 0);
  EXPECT_GT(got.num_preemptions, 0);
}

// bf16 on the CUDA device: bf16 matrices on the device (bf16 activations)
// and a bf16 KV cache, whose blocks take half the bytes: 9 blocks in half
// the bytes of the fp32 case still force swaps, which move bf16 blocks out
// and back. The outputs are those of the same CUDA runtime with room for
// everything (no preemption).
// NOTE: not compared with the CPU runtime: with bf16 roundings the two
// passes' logits differ by up to ~u = 2^-8 (cuda_forward_test), enough to
// break a near-tie in 160 greedy tokens (one did: request 1, token 6).
TEST(model_runtime_cuda, bf16_weights_and_cache_survive_swap_preemption_on_the_cuda_device) {
  KVACTOR_CUDA_OR_SKIP();
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(tokens(20, 100 * i + 3));
  engine_config roomy;
  roomy.device = "cuda";
  roomy.block_size = 16;
  roomy.activations = number_format::bf16;
  roomy.kv_dtype = number_format::bf16;
  const outcome want = serve(roomy, prompts, 40);

  engine_config tight = roomy;
  tight.preemption = preemption_mode::swap;
  tight.kv_cache_bytes = 9 * 16384; // 9 blocks of 16 KiB in bf16
  tight.swap_bytes = 32 * 16384;
  const outcome got = serve(tight, prompts, 40);
  EXPECT_EQ(got.device_blocks_total, 9); // a bf16 block is half an fp32 one
  EXPECT_EQ(got.tokens, want.tokens);
  EXPECT_EQ(want.num_preemptions, 0);
  EXPECT_GT(got.num_preemptions, 0);
}

// A corrupt checkpoint whose logits are all NaN: the device's sampler says
// so, greedy or sampled, and each request ends with non_finite_logits and no
// token.
TEST(model_runtime_cuda, logits_of_nan_end_each_request_with_an_error_on_the_cuda_device) {
  KVACTOR_CUDA_OR_SKIP();
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  engine_config e;
  e.device = "cuda";
  e.block_size = 16;
  e.model_dir = testing::nan_model_dir(64).string();
  auto rt = spawn_runtime(sys, e);
  ASSERT_TRUE(rt) << sys.render(rt.error());
  auto events = std::make_shared<collector>();
  auto sink = sys.spawn(sink_fn, events);
  for (const generate_request& req : testing::greedy_and_sampled(tokens(20, 3))) {
    request_id id = 0;
    self->request(*rt, caf::infinite, generate_atom::value, req, sink)
      .receive([&](const admission& a) { id = a.id; },
               [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
    testing::expect_no_finite_logit(events->wait_done(id));
  }
  self->request(*rt, caf::infinite, shutdown_atom::value)
    .receive([](bool) {}, [&](const caf::error& err) { ADD_FAILURE() << sys.render(err); });
}

} // namespace
} // namespace kvactor
