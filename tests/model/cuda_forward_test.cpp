// The CUDA forward pass against the CPU forward pass on the small tiny
// models of forward_test: the same steps on both devices over the same
// scattered blocks (unused cache slots NaN on both), the same greedy token
// for every sampled row and every logit within the forward tests'
// tolerance. Both sides compute with the same dtypes: fp32 matrices, bf16
// matrices widened (fp32 on the device), bf16 activations (bf16 matrices on
// the device, cuBLAS's bf16 GEMM), each over an fp32 or a bf16 KV cache.
// The CPU side is the paged forward pass that forward_test checks against
// the dense reference. Skipped without a GPU; failing instead when
// KVACTOR_REQUIRE_GPU=1 (GPU CI), as kernels/cuda_device_test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "forward_harness.hpp"
#include "kernels/cuda/attention_split.hpp"
#include "model/cuda/cuda_transformer.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;

bool gpu_required() {
  const char* v = std::getenv("KVACTOR_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// One sequence as each device's harness holds it (same tokens, same blocks).
struct twin_seq {
  explicit twin_seq(std::vector<int32_t> tokens)
    : cpu{tokens, {}, 0}, gpu{std::move(tokens), {}, 0} {}
  void append(token_id t) {
    cpu.tokens.push_back(t);
    gpu.tokens.push_back(t);
  }
  int32_t num_cached() const { return cpu.num_cached; }

  paged_seq cpu, gpu;
};

// fp32 everywhere: the forward tests' 2e-4 + 1e-3 |ref| (summation order
// only). With bf16 activations or a bf16 cache both devices round the same
// values to bf16, but a value a few fp32 ulps apart on the two sides (their
// sums run in different orders) can round to neighbouring bf16 values, a
// step of u = 2^-8 of itself, which reaches the logits as in forward_test's
// bf16 cache against the dense reference: the bound is the same 2u + 2u |ref|.
tolerance tolerance_for(const dtypes& d) {
  const double u = std::ldexp(1.0, -8);
  return d.exact() ? tolerance{} : tolerance{2 * u, 2 * u};
}

// (style, dtypes)
class cuda_forward_test : public ::testing::TestWithParam<std::tuple<architecture, dtypes>> {
protected:
  void SetUp() override {
    auto d = kernels::make_device("cuda");
    if (!d) {
      if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
      GTEST_SKIP() << d.error().message;
    }
    const auto [arch, t] = GetParam();
    // NOTE: the CPU side keeps the fp32 load unless its products take bf16
    // (bf16 and fp32 matrices give it the same bits with fp32 activations).
    const dtype cpu_matrices = t.activations == dtype::bf16 ? dtype::bf16 : dtype::f32;
    cpu_ =
      std::make_unique<harness>(tiny_model(arch, cpu_matrices), 64, "cpu", t.kv, t.activations);
    gpu_ = std::make_unique<harness>(tiny_model(arch, t.matrices), 64, "cuda", t.kv, t.activations);
  }
  void TearDown() override {
    if (cpu_)
      std::printf("worst |cuda - cpu| logit: %.3g (max |cpu logit| %.3g)\n", worst_, largest_);
  }

  // The CPU's greedy token, or with bf16 rounding a near-tie: a token whose
  // CPU logit is within two tolerances of the top one.
  void expect_greedy(std::span<const float> got, std::span<const float> want,
                     const std::string& what) const {
    const token_id top = greedy(want), picked = greedy(got);
    if (picked == top || std::get<1>(GetParam()).exact()) {
      EXPECT_EQ(picked, top) << what;
      return;
    }
    const tolerance tol = tolerance_for(std::get<1>(GetParam()));
    const double gap = double(want[size_t(top)]) - double(want[size_t(picked)]);
    EXPECT_LE(gap, 2 * (tol.atol + tol.rtol * std::abs(double(want[size_t(top)]))))
        << what << ": token " << picked << " for the CPU's " << top << ", not a near-tie";
  }

  // One step on both devices; every sampled row compared. Returns the CPU's
  // logits, from which the tests take the next tokens.
  std::vector<float> step(std::vector<std::pair<twin_seq*, int32_t>> work,
                          const std::string& what) {
    std::vector<std::pair<paged_seq*, int32_t>> on_cpu, on_gpu;
    for (auto& [s, n] : work) {
      on_cpu.push_back({&s->cpu, n});
      on_gpu.push_back({&s->gpu, n});
    }
    const std::vector<float> want = cpu_->step(on_cpu);
    const std::vector<float> got = gpu_->step(on_gpu);
    EXPECT_EQ(got.size(), want.size()) << what;
    const int64_t vocab = cpu_->vocab();
    if (got.size() != want.size()) return want;
    for (int64_t r = 0; r < static_cast<int64_t>(want.size()) / vocab; ++r) {
      const auto w = row(want, r, vocab);
      expect_greedy(row(got, r, vocab), w, what + ", row " + std::to_string(r));
      expect_close(row(got, r, vocab), std::vector<double>(w.begin(), w.end()),
                   what + ", row " + std::to_string(r), tolerance_for(std::get<1>(GetParam())));
    }
    for (size_t i = 0; i < want.size(); ++i) {
      worst_ = std::max(worst_, std::abs(double(got[i]) - double(want[i])));
      largest_ = std::max(largest_, std::abs(double(want[i])));
    }
    return want;
  }

  std::unique_ptr<harness> cpu_, gpu_;
  double worst_ = 0, largest_ = 0;
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
  // The six decode steps share a shape (5 sequences, 5 rows, tables 16
  // wide): the first ran launch by launch, the second was captured as a
  // CUDA graph, and it and the four after ran as the graph.
  const auto& cuda = dynamic_cast<const cuda_transformer&>(gpu_->forward());
  EXPECT_EQ(cuda.num_graphs(), 1);
  EXPECT_EQ(cuda.graph_steps(), 5);
  EXPECT_EQ(cuda.last_step_launches(), 0);
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

// The device memory of the weights, as device_weights allocated it: bf16
// matrices (bf16 activations) in half the bytes of fp32 ones, each the
// weight_plan's total for that dtype.
TEST(cuda_forward, bf16_matrices_take_half_the_device_memory_of_fp32_ones) {
  if (!kernels::make_device("cuda")) {
    if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but no CUDA device";
    GTEST_SKIP() << "no CUDA device";
  }
  for (const architecture arch : {architecture::llama, architecture::qwen3}) {
    const loaded_model& m = tiny_model(arch, dtype::bf16);
    harness wide(m, 8, "cuda"), narrow(m, 8, "cuda", kernels::dtype::f32, dtype::bf16);
    const auto* f32 = dynamic_cast<const cuda_transformer*>(&wide.forward());
    const auto* bf16 = dynamic_cast<const cuda_transformer*>(&narrow.forward());
    ASSERT_NE(f32, nullptr);
    ASSERT_NE(bf16, nullptr);
    EXPECT_EQ(f32->weight_bytes(), weight_plan::make(m.weights, dtype::f32).total_bytes);
    EXPECT_EQ(bf16->weight_bytes(), weight_plan::make(m.weights, dtype::bf16).total_bytes);
    EXPECT_LT(2 * bf16->weight_bytes(), f32->weight_bytes() + f32->weight_bytes() / 100);
    std::printf(
      "%s test model on the device: %zu bytes of weights with fp32 activations, %zu with bf16\n",
      std::string(architecture_name(arch)).c_str(), f32->weight_bytes(), bf16->weight_bytes());
  }
}

// A decode step replayed as a CUDA graph gives the bits of the same step
// launched kernel by kernel (the same launches with the same arguments),
// through shapes that change: sequences joining, a table growing past 16
// blocks (a wider graph).
TEST(cuda_graphs, decode_steps_as_graphs_give_the_logits_of_launches_one_by_one) {
  if (auto d = kernels::make_device("cuda"); !d) {
    if (gpu_required()) FAIL() << "KVACTOR_REQUIRE_GPU=1 but " << d.error().message;
    GTEST_SKIP() << d.error().message;
  }
  const loaded_model& m = tiny_model(architecture::llama, dtype::bf16);
  forward_limits eager_limits{256, 16};
  eager_limits.max_cuda_graphs = 0;
  harness eager(m, 64, "cuda", kernels::dtype::bf16, dtype::bf16, eager_limits),
    graphed(m, 64, "cuda", kernels::dtype::bf16, dtype::bf16);
  std::vector<twin_seq> seqs;
  seqs.reserve(3);
  for (int i = 0; i < 3; ++i) seqs.emplace_back(prompt(i == 0 ? 250 : 3 + i, 7 + i));
  auto step = [&](std::vector<twin_seq*> which, int32_t n, const std::string& what) {
    std::vector<std::pair<paged_seq*, int32_t>> a, b;
    for (twin_seq* s : which) {
      a.push_back({&s->cpu, n == 0 ? int32_t(s->cpu.tokens.size()) - s->cpu.num_cached : n});
      b.push_back({&s->gpu, a.back().second});
    }
    const std::vector<float> want = eager.step(a), got = graphed.step(b);
    EXPECT_EQ(got, want) << what;
    for (size_t r = 0; r < which.size() && !want.empty(); ++r)
      which[r]->append(greedy(row(want, int64_t(r), eager.vocab())));
    return want;
  };
  step({&seqs[1]}, 0, "prefill of 1");
  for (int i = 0; i < 4; ++i) step({&seqs[1]}, 1, "1 alone, decode " + std::to_string(i));
  step({&seqs[2]}, 0, "prefill of 2");
  for (int i = 0; i < 4; ++i) step({&seqs[1], &seqs[2]}, 1, "1 and 2, decode " + std::to_string(i));
  // 250 tokens (16 blocks), then decodes past 256 (17 blocks: tables 32 wide).
  step({&seqs[0]}, 0, "prefill of 0");
  for (int i = 0; i < 8; ++i)
    step({&seqs[0], &seqs[1], &seqs[2]}, 1, "all three, decode " + std::to_string(i));
  const auto& e = dynamic_cast<const cuda_transformer&>(eager.forward());
  const auto& g = dynamic_cast<const cuda_transformer&>(graphed.forward());
  EXPECT_EQ(e.graph_steps(), 0);
  EXPECT_EQ(e.num_graphs(), 0);
  EXPECT_GT(e.last_step_launches(), 16); // at least a launch per layer and more
  // 1 alone: 3 steps as graphs; 1 and 2: 3; all three: tables 16 wide six
  // times (up to 256 tokens), then 32 wide twice: 5 + 1.
  EXPECT_EQ(g.num_graphs(), 4);
  EXPECT_EQ(g.graph_steps(), 3 + 3 + 1 + 5);
  EXPECT_EQ(g.last_step_launches(), 0);
}

// Decode past the split-K threshold (two chunks of the minimum): on the GPU the
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
  // (context + 3 decodes) / 16 rounded up, and prime to 5 (the harness scatters by 5)
  const int64_t num_blocks = 71;
  harness cpu(*m, num_blocks, "cpu"), gpu(*m, num_blocks, "cuda");
  // 1 sequence, 2 head groups, 1040 keys (65 blocks) at the first decode, 132 SMs
  EXPECT_GT(kernels::plan_attention_split(1, 2, 65 * block_size, 132).num_splits, 1);
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

INSTANTIATE_TEST_SUITE_P(styles, cuda_forward_test,
                         ::testing::Combine(::testing::Values(architecture::llama,
                                                              architecture::qwen3),
                                            ::testing::ValuesIn(every_dtypes)),
                         case_name);
// Qwen2's biases: one launch more per layer (every dtype of it runs through
// the emulator in emulated_forward_test; each case here takes ~20 s on the shim).
INSTANTIATE_TEST_SUITE_P(qwen2, cuda_forward_test,
                         ::testing::Combine(::testing::Values(architecture::qwen2),
                                            ::testing::Values(dtypes{dtype::f32, dtype::f32,
                                                                     dtype::f32})),
                         case_name);

} // namespace
} // namespace kvactor::model
