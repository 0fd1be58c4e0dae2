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
