// The CUDA forward pass against the CPU forward pass on the small tiny
// models of forward_test: the same steps on both devices over the same
// scattered blocks (unused cache slots NaN on both), the same greedy token
// for every sampled row and every logit within the forward tests'
// tolerance. The CPU side is the paged forward pass that forward_test checks
// against the dense reference. Skipped without a GPU; failing instead when
// KVACTOR_REQUIRE_GPU=1 (GPU CI), as kernels/cuda_device_test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "forward_harness.hpp"
#include "kernels/cuda/attention_split.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;

bool gpu_required() {
  const char* v = std::getenv("KVACTOR_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// One sequence as each device's harness holds it (same tokens, same blocks).
struct twin_seq {
  explicit twin_seq(std::vector<int32_t> tokens) : cpu{tokens, {}, 0}, gpu{std::move(tokens), {}, 0} {}
  void append(token_id t) {
    cpu.tokens.push_back(t);
    gpu.tokens.push_back(t);
  }
  int32_t num_cached() const { return cpu.num_cached; }

  paged_seq cpu, gpu;
};

// (style, matrices the GPU side loads: fp32, or bf16 widened at upload)
class cuda_forward_test : public ::testing::TestWithParam<std::tuple<architecture, dtype>> {
protected:
  void SetUp() override {
    auto d = kernels::make_device("cuda");
    if (!d) {
      if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
      GTEST_SKIP() << d.error().message;
    }
    const auto [arch, matrices] = GetParam();
    cpu_ = std::make_unique<harness>(tiny_model(arch), 64, "cpu");
    gpu_ = std::make_unique<harness>(tiny_model(arch, matrices), 64, "cuda");
  }

  // One step on both devices; every sampled row compared. Returns the CPU's
  // logits, from which the tests take the next tokens.
  std::vector<float> step(std::vector<std::pair<twin_seq*, int32_t>> work, const std::string& what) {
    std::vector<std::pair<paged_seq*, int32_t>> on_cpu, on_gpu;
    for (auto& [s, n] : work) {
      on_cpu.push_back({&s->cpu, n});
      on_gpu.push_back({&s->gpu, n});
    }
    const std::vector<float> want = cpu_->step(on_cpu);
    const std::vector<float> got = gpu_->step(on_gpu);
    EXPECT_EQ(got.size(), want.size()) << what;
    const int64_t vocab = cpu_->vocab();
    for (int64_t r = 0; r < static_cast<int64_t>(want.size()) / vocab; ++r) {
      const auto w = row(want, r, vocab);
      EXPECT_EQ(greedy(row(got, r, vocab)), greedy(w)) << what << ", row " << r;
      expect_close(row(got, r, vocab), std::vector<double>(w.begin(), w.end()), what + ", row " + std::to_string(r));
    }
    return want;
  }

  std::unique_ptr<harness> cpu_, gpu_;
};

TEST_P(cuda_forward_test, mixed_prefill_batch_then_batched_decode) {
  const std::vector<int> lengths{1, 5, 16, 17, 40};
  std::vector<twin_seq> seqs;
  seqs.reserve(lengths.size());
  std::vector<std::pair<twin_seq*, int32_t>> work;
  for (size_t i = 0; i < lengths.size(); ++i) seqs.emplace_back(prompt(lengths[i], int(i) + 2));
  for (auto& s : seqs) work.push_back({&s, int32_t(s.cpu.tokens.size())});
  std::vector<float> logits = step(work, "prefill");
  for (int decode = 0; decode < 6; ++decode) { // every step in the decode layout
    work.clear();
    for (size_t i = 0; i < seqs.size(); ++i) {
      seqs[i].append(greedy(row(logits, int64_t(i), cpu_->vocab())));
      work.push_back({&seqs[i], 1});
    }
    logits = step(work, "decode " + std::to_string(decode));
  }
}

TEST_P(cuda_forward_test, chunked_prefill_with_a_decode_riding_along) {
  for (int32_t chunk : {1, 7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    SetUp(); // fresh caches and block lists for each chunk size
    twin_seq s(prompt(70, 9)), other(prompt(3, 4));
    // A first chunk alone: a step in which no row samples.
    std::vector<float> logits = step({{&s, chunk}}, "first chunk alone");
    EXPECT_TRUE(logits.empty());
    std::vector<float> other_logits = step({{&other, 3}}, "other's prefill");
    while (s.num_cached() < 70) {
      const int32_t n = std::min<int32_t>(chunk, 70 - s.num_cached());
      other.append(greedy(row(other_logits, 0, cpu_->vocab())));
      logits = step({{&s, n}, {&other, 1}}, "chunk at " + std::to_string(s.num_cached()));
      const bool s_sampled = s.num_cached() == 70;
      other_logits.assign(logits.begin() + (s_sampled ? cpu_->vocab() : 0), logits.end());
    }
    for (int decode = 0; decode < 4; ++decode) {
      s.append(greedy(row(logits, 0, cpu_->vocab())));
      logits = step({{&s, 1}}, "decode " + std::to_string(decode));
    }
  }
}

// Decode past the split-K threshold (two chunks of 512 keys): on the GPU the
// attention of every decode step splits each sequence's context across
// blocks and merges (the forward pass hands the launcher the compute
// stream's workspace); the logits still match the CPU pass's. A tiny model
// of one layer with a 2048-token context, prefilled in chunks of 256.
TEST(cuda_forward_long_context, decode_past_the_split_threshold_matches_the_cpu) {
  if (auto d = kernels::make_device("cuda"); !d) {
    if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
    GTEST_SKIP() << d.error().message;
  }
  test_support::temp_dir dir;
  tiny::tiny_options o;
  o.hidden_size = 128;
  o.num_layers = 1;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = 64;
  o.intermediate_size = 192;
  o.vocab_size = 512;
  o.max_context = 2048;
  o.seed = 11;
  ASSERT_TRUE(tiny::write_model(dir.path(), o));
  auto m = load_model_folder(dir.path(), dtype::f32);
  ASSERT_TRUE(m.has_value());
  constexpr int32_t context = 1030;
  const int64_t num_blocks = 71;  // (context + 3 decodes) / 16 rounded up, and prime to 5 (the harness scatters by 5)
  harness cpu(*m, num_blocks, "cpu"), gpu(*m, num_blocks, "cuda");
  // 1 sequence, 2 head groups, 1040 keys (65 blocks) at the first decode, 132 SMs: 2 splits
  EXPECT_EQ(kernels::plan_attention_split(1, 2, 65 * block_size, 132).num_splits, 2);
  paged_seq on_cpu{prompt(context, 5), {}, 0}, on_gpu{prompt(context, 5), {}, 0};
  std::vector<float> want, got;
  for (int32_t done = 0; done < context; done += 256) {
    const int32_t n = std::min(256, context - done);
    want = cpu.step({{&on_cpu, n}});
    got = gpu.step({{&on_gpu, n}});
  }
  for (int decode = 0; decode < 3; ++decode) {
    const std::string what = "decode at " + std::to_string(on_cpu.num_cached + 1) + " keys";
    ASSERT_EQ(got.size(), want.size()) << what;
    EXPECT_EQ(greedy(got), greedy(want)) << what;
    expect_close(got, std::vector<double>(want.begin(), want.end()), what);
    const token_id next = greedy(want);
    on_cpu.tokens.push_back(next);
    on_gpu.tokens.push_back(next);
    want = cpu.step({{&on_cpu, 1}});
    got = gpu.step({{&on_gpu, 1}});
  }
  EXPECT_EQ(greedy(got), greedy(want));
  expect_close(got, std::vector<double>(want.begin(), want.end()), "last decode");
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<architecture, dtype>>& info) {
  const auto [arch, matrices] = info.param;
  return std::string(architecture_name(arch)) + "_" + kernels::dtype_name(matrices);
}

INSTANTIATE_TEST_SUITE_P(styles, cuda_forward_test,
                         ::testing::Combine(::testing::Values(architecture::llama, architecture::qwen3),
                                            ::testing::Values(dtype::f32, dtype::bf16)),
                         case_name);

} // namespace
} // namespace kvactor::model
