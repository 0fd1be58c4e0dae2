// The proof that paging is right: the paged forward pass (batched, chunked,
// through the KV-cache kernels) against a dense reference written plainly in
// double (dense_reference.hpp), on small Llama-, Qwen2- and Qwen3-style tiny models,
// over an fp32 and a bf16 KV cache. Same greedy tokens (bf16: but for
// near-ties), logits within the cache dtype's tolerance.
#include <gtest/gtest.h>

#include "forward_harness.hpp"
#include "kernels/ops.hpp"

#include <cmath>
#include <optional>

namespace kvactor::model {
namespace {

using namespace test_support;

// fp32 cache: 2e-4 + 1e-3 |ref| (fp32 rounding and summation order only).
// bf16 cache: bf16 keeps 8 significant bits, so each rounding on the
// attention's path (q, k, v, P in P.V, the output) moves a value by at most
// u = 2^-8 of itself. Those relative errors of order u, a few of them per
// element and of either sign, enter the residual stream through o_proj as
// noise of relative size ~u of the attention's share, and reach the logits
// (a dot product with a normalised hidden state) as an absolute error of
// about u times the logits' own scale (|logit| <= ~1 in these models). The
// bound is 2u + 2u |ref|: twice u at that scale. Measured: the worst
// difference over every case below is 0.9u (3.5e-3, logits' rms 0.23).
tolerance logits_tolerance(kernels::dtype kv) {
  const double u = std::ldexp(1.0, -8);
  return kv == kernels::dtype::f32 ? tolerance{} : tolerance{2 * u, 2 * u};
}

class forward_test : public ::testing::TestWithParam<std::tuple<architecture, kernels::dtype>> {
protected:
  const loaded_model& m() const { return tiny_model(std::get<0>(GetParam())); }
  kernels::dtype kv() const { return std::get<1>(GetParam()); }
  tolerance tol() const { return logits_tolerance(kv()); }
  harness fresh(int64_t num_blocks = 64) const { return harness(m(), num_blocks, "cpu", kv()); }

  // The paged pass's greedy token is the reference's. With a bf16 cache, a
  // near-tie may break the other way: a token whose reference logit is
  // within two tolerances of the top (both logits may be off by one, in
  // opposite directions) passes too; the fp32 cache gets no such allowance.
  void expect_greedy(token_id got, const std::vector<double>& want, const std::string& what) const {
    const token_id top = argmax(want);
    if (got == top || kv() == kernels::dtype::f32) {
      EXPECT_EQ(got, top) << what;
      return;
    }
    const double gap = want[size_t(top)] - want[size_t(got)];
    EXPECT_LE(gap, 2 * (tol().atol + tol().rtol * std::abs(want[size_t(top)])))
      << what << ": token " << got << " for the reference's " << top << ", not a near-tie";
  }

  // Greedy decode of `seqs` together for `num_steps`, each checked against its reference.
  void decode_together(harness& h, std::vector<paged_seq*> seqs, std::vector<dense_reference*> refs,
                       std::vector<float> logits, int num_steps) {
    for (int step = 0; step < num_steps; ++step) {
      std::vector<std::pair<paged_seq*, int32_t>> work;
      for (size_t i = 0; i < seqs.size(); ++i) {
        const std::vector<double> want = catch_up(*refs[i], *seqs[i]);
        const token_id got = greedy(row(logits, int64_t(i), h.vocab()));
        expect_greedy(got, want, "seq " + std::to_string(i) + " step " + std::to_string(step));
        seqs[i]->tokens.push_back(got);
        work.push_back({seqs[i], 1});
      }
      logits = h.step(work);
      for (size_t i = 0; i < seqs.size(); ++i)
        expect_close(row(logits, int64_t(i), h.vocab()), catch_up(*refs[i], *seqs[i]),
                     "seq " + std::to_string(i) + " decode " + std::to_string(step), tol());
    }
  }
};

TEST_P(forward_test, one_sequence) {
  harness h = fresh();
  dense_reference ref(m().config, m().weights);
  paged_seq s{prompt(23, 1), {}, 0};
  std::vector<float> logits = h.step({{&s, 23}});
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, s), "prefill", tol());
  decode_together(h, {&s}, {&ref}, logits, 10); // crosses into the third block
}

TEST_P(forward_test, batch_of_mixed_lengths) {
  harness h = fresh();
  const std::vector<int> lengths{1, 5, 16, 17, 40};
  std::vector<paged_seq> seqs;
  std::vector<std::unique_ptr<dense_reference>> refs;
  std::vector<std::pair<paged_seq*, int32_t>> work;
  seqs.reserve(lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    seqs.push_back({prompt(lengths[i], int(i) + 2), {}, 0});
    refs.push_back(std::make_unique<dense_reference>(m().config, m().weights));
  }
  for (auto& s : seqs) work.push_back({&s, int32_t(s.tokens.size())});
  std::vector<float> logits = h.step(work);
  for (size_t i = 0; i < seqs.size(); ++i)
    expect_close(row(logits, int64_t(i), h.vocab()), catch_up(*refs[i], seqs[i]),
                 "prefill " + std::to_string(i), tol());
  std::vector<paged_seq*> ps;
  std::vector<dense_reference*> rs;
  for (size_t i = 0; i < seqs.size(); ++i) ps.push_back(&seqs[i]), rs.push_back(refs[i].get());
  decode_together(h, ps, rs, logits, 6);
}

TEST_P(forward_test, prefill_in_chunks) {
  for (int32_t chunk : {1, 7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    harness h = fresh();
    dense_reference ref(m().config, m().weights);
    paged_seq s{prompt(70, 9), {}, 0};
    // A decode of another sequence rides along with each chunk: mixed steps.
    paged_seq other{prompt(3, 4), {}, 0};
    dense_reference other_ref(m().config, m().weights);
    std::vector<float> other_logits = h.step({{&other, 3}});
    std::vector<float> logits;
    while (s.num_cached < 70) {
      const int32_t n = std::min<int32_t>(chunk, 70 - s.num_cached);
      other.tokens.push_back(greedy(row(other_logits, 0, h.vocab())));
      logits = h.step({{&other, 1}, {&s, n}});
      other_logits.assign(logits.begin(), logits.begin() + h.vocab());
      expect_close(row(logits, 0, h.vocab()), catch_up(other_ref, other), "riding decode", tol());
    }
    expect_close(row(logits, 1, h.vocab()), catch_up(ref, s), "chunked prefill", tol());
    decode_together(h, {&s}, {&ref}, std::vector<float>(logits.begin() + h.vocab(), logits.end()),
                    3);
  }
}

TEST_P(forward_test, prefix_cache_hit) {
  harness h = fresh();
  // A computes 2 full blocks of a shared prefix plus its own suffix.
  std::vector<int32_t> shared = prompt(32, 5);
  paged_seq a{shared, {}, 0};
  a.tokens.push_back(3);
  a.tokens.push_back(4);
  h.step({{&a, int32_t(a.tokens.size())}});
  // B reuses A's two prefix blocks and computes only its suffix.
  paged_seq b{shared, {a.table[0], a.table[1]}, 32};
  for (int32_t t : prompt(9, 6)) b.tokens.push_back(t);
  dense_reference ref(m().config, m().weights);
  std::vector<float> logits = h.step({{&b, 9}});
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, b), "suffix after a prefix hit", tol());
  decode_together(h, {&b}, {&ref}, logits, 3);
}

TEST_P(forward_test, swapped_out_and_back_into_other_blocks) {
  harness h = fresh();
  dense_reference ref(m().config, m().weights);
  paged_seq s{prompt(37, 8), {}, 0};
  std::vector<float> logits = h.step({{&s, 37}});
  decode_together(h, {&s}, {&ref}, logits, 2);
  const token_id next = argmax(catch_up(ref, s));

  auto host = kernels::allocate_kv_cache(h.dev(), kernels::memory_kind::pinned_host,
                                         transformer::cache_shape(m().config, 8, block_size, kv()));
  ASSERT_TRUE(host.has_value());
  std::vector<kernels::block_pair> out, in;
  std::vector<int32_t> new_table;
  for (size_t i = 0; i < s.table.size(); ++i) {
    out.push_back({s.table[i], int32_t(7 - i)});
    new_table.push_back(h.take_block());
    in.push_back({int32_t(7 - i), new_table.back()});
  }
  kernels::swap_blocks(h.dev(), kernels::streams::swap_out, h.cache(), host->view, out)->wait();
  // The old blocks are reused by someone else meanwhile.
  for (const auto& p : out)
    for (int32_t l = 0; l < h.cache().shape.num_layers; ++l)
      for (int w = 0; w < 2; ++w)
        std::fill_n(static_cast<float*>(h.cache().block(l, w, p.src)),
                    h.cache().shape.block_bytes() / 4, 1e3f);
  kernels::swap_blocks(h.dev(), kernels::streams::swap_in, host->view, h.cache(), in)->wait();
  s.table = new_table;

  s.tokens.push_back(next);
  logits = h.step({{&s, 1}});
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, s), "first step after swap-in", tol());
  decode_together(h, {&s}, {&ref}, logits, 3);
}

TEST_P(forward_test, fork_after_copy_on_write) {
  harness h = fresh();
  // Parent: one full block and a partial one (20 tokens).
  paged_seq parent{prompt(20, 10), {}, 0};
  h.step({{&parent, 20}});
  // Child shares block 0; the partial last block is copied before it diverges.
  paged_seq child = parent;
  child.table[1] = h.take_block();
  const int32_t pair[2] = {parent.table[1], child.table[1]};
  kernels::copy_blocks_params cp{};
  cp.cache = h.cache().base;
  cp.pairs = pair;
  cp.num_pairs = 1;
  cp.num_layers = h.cache().shape.num_layers;
  cp.num_blocks = h.cache().shape.num_blocks;
  cp.block_bytes = h.cache().shape.block_bytes();
  kernels::copy_blocks(h.dev(), kernels::streams::compute, cp);
  h.dev().synchronize();

  dense_reference parent_ref(m().config, m().weights), child_ref(m().config, m().weights);
  parent.tokens.push_back(100);
  child.tokens.push_back(200);
  std::vector<float> logits = h.step({{&parent, 1}, {&child, 1}});
  expect_close(row(logits, 0, h.vocab()), catch_up(parent_ref, parent), "parent after fork", tol());
  expect_close(row(logits, 1, h.vocab()), catch_up(child_ref, child), "child after fork", tol());
  decode_together(h, {&parent, &child}, {&parent_ref, &child_ref}, logits, 4);
}

TEST_P(forward_test, bf16_matrices_give_the_fp32_results) {
  // The checkpoint is bf16 on disk: fp32 matrices hold exactly its values widened.
  const loaded_model& m16 = tiny_model(std::get<0>(GetParam()), dtype::bf16);
  ASSERT_EQ(m16.weights.layers()[0].q_proj.type, dtype::bf16);
  harness h32 = fresh(), h16(m16, 64, "cpu", kv());
  paged_seq a32{prompt(30, 13), {}, 0}, b32{prompt(3, 14), {}, 0};
  paged_seq a16 = a32, b16 = b32;
  std::vector<float> l32 = h32.step({{&a32, 30}, {&b32, 3}});
  std::vector<float> l16 = h16.step({{&a16, 30}, {&b16, 3}});
  for (int step = 0; step < 4; ++step) {
    ASSERT_EQ(l16.size(), l32.size());
    const std::vector<double> want(l32.begin(), l32.end());
    expect_close(l16, want, "bf16 vs fp32 matrices, step " + std::to_string(step));
    for (auto [s16, s32, i] : {std::tuple{&a16, &a32, 0}, std::tuple{&b16, &b32, 1}}) {
      const token_id t = greedy(row(l32, i, h32.vocab()));
      EXPECT_EQ(greedy(row(l16, i, h16.vocab())), t);
      s32->tokens.push_back(t);
      s16->tokens.push_back(t);
    }
    l32 = h32.step({{&a32, 1}, {&b32, 1}});
    l16 = h16.step({{&a16, 1}, {&b16, 1}});
  }
}

// bf16 activations round every product's input rows to bf16 (8 significant
// bits: a relative error of at most 2^-9 each) and sum in fp32: the logits
// stay within a few times that of the same bf16 matrices with fp32
// activations, step after step, prefill and decode (same tokens fed to both).
TEST_P(forward_test, bf16_activations_stay_close_to_fp32_activations) {
  const loaded_model& m16 = tiny_model(std::get<0>(GetParam()), dtype::bf16);
  harness exact(m16, 64, "cpu", kv()), rounded(m16, 64, "cpu", kv(), dtype::bf16);
  paged_seq a{prompt(30, 13), {}, 0}, b{prompt(3, 14), {}, 0};
  paged_seq ar = a, br = b;
  std::vector<float> want = exact.step({{&a, 30}, {&b, 3}});
  std::vector<float> got = rounded.step({{&ar, 30}, {&br, 3}});
  for (int step = 0; step < 6; ++step) {
    ASSERT_EQ(got.size(), want.size());
    double err = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      norm += double(want[i]) * want[i];
    }
    const double relative = std::sqrt(err / norm);
    // measured 0.0029-0.0037 on both styles
    EXPECT_LT(relative, 4 * 0x1p-9) << "step " << step;
    EXPECT_GT(relative, 0.0) << "step " << step << ": bf16 activations changed nothing";
    for (auto [s, r, i] : {std::tuple{&a, &ar, 0}, std::tuple{&b, &br, 1}}) {
      const token_id t = greedy(row(want, i, exact.vocab()));
      s->tokens.push_back(t);
      r->tokens.push_back(t);
    }
    want = exact.step({{&a, 1}, {&b, 1}});
    got = rounded.step({{&ar, 1}, {&br, 1}});
  }
}

TEST_P(forward_test, only_sampling_rows_get_logits) {
  harness h = fresh();
  paged_seq a{prompt(10, 11), {}, 0}, b{prompt(12, 12), {}, 0};
  const std::vector<float> logits = h.step({{&a, 5}, {&b, 12}}); // a mid-prefill: no sample
  EXPECT_EQ(logits.size(), size_t(h.vocab()));
  dense_reference ref(m().config, m().weights);
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, b), "the one sampling row", tol());
}

INSTANTIATE_TEST_SUITE_P(styles, forward_test,
                         ::testing::Combine(
                           ::testing::Values(architecture::llama, architecture::qwen2,
                                             architecture::qwen3),
                           ::testing::Values(kernels::dtype::f32, kernels::dtype::bf16)),
                         [](const auto& p) {
                           return std::string(architecture_name(std::get<0>(p.param))) + "_kv_" +
                                  kernels::dtype_name(std::get<1>(p.param));
                         });

TEST(forward_batch, slots_tables_and_sample_rows) {
  const std::vector<int32_t> ta{1, 2, 3}, tb{4};
  const std::vector<int32_t> blocks_a{9, 4}, blocks_b{7, 2};
  const std::vector<sequence_chunk> chunks{{3, ta, blocks_a, false}, {4, tb, blocks_b, true}};
  const forward_batch b = forward_batch::build(chunks, 4);
  EXPECT_EQ(b.positions, (std::vector<int32_t>{3, 4, 5, 4}));
  EXPECT_EQ(b.slot_mapping, (std::vector<int64_t>{9 * 4 + 3, 4 * 4 + 0, 4 * 4 + 1, 2 * 4 + 0}));
  EXPECT_EQ(b.seq_lens, (std::vector<int32_t>{6, 5}));
  EXPECT_EQ(b.query_start_loc, (std::vector<int32_t>{0, 3, 4}));
  EXPECT_EQ(b.block_tables, (std::vector<int32_t>{9, 4, 7, 2}));
  EXPECT_EQ(b.sample_rows, (std::vector<int32_t>{3}));
  EXPECT_FALSE(b.is_decode());
}

TEST(transformer, refuses_a_cache_of_another_shape) {
  const loaded_model& m = tiny_model(architecture::llama);
  auto dev = kernels::make_device("cpu");
  ASSERT_TRUE(dev.has_value());
  kernels::kv_cache_shape shape = transformer::cache_shape(m.config, 4, 16);
  shape.num_kv_heads = 1;
  auto cache = kernels::allocate_kv_cache(**dev, kernels::memory_kind::device, shape);
  ASSERT_TRUE(cache.has_value());
  auto t = transformer::create(m.config, m.weights, **dev, cache->view, {});
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message.find("KV cache shape"), std::string::npos) << t.error().message;
}

TEST(transformer, refuses_a_kv_cache_dtype_the_cpu_pass_does_not_take) {
  const loaded_model& m = tiny_model(architecture::llama);
  auto dev = kernels::make_device("cpu");
  ASSERT_TRUE(dev.has_value());
  auto cache =
    kernels::allocate_kv_cache(**dev, kernels::memory_kind::device,
                               transformer::cache_shape(m.config, 4, 16, kernels::dtype::f16));
  ASSERT_TRUE(cache.has_value());
  auto t = transformer::create(m.config, m.weights, **dev, cache->view, {});
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message.find("f32 or bf16 KV cache, not f16"), std::string::npos)
    << t.error().message;
}

// A device that calls itself CUDA and must not be used: the CUDA pass's
// refusal of an f16 cache comes before it touches the device (and is tested
// without a GPU).
class cuda_kind_device final : public kernels::device {
public:
  kernels::device_kind kind() const override { return kernels::device_kind::cuda; }
  std::string name() const override { return "cuda (stand-in)"; }
  int32_t num_streams() const override { return 3; }
  std::optional<kernels::buffer> allocate(kernels::memory_kind, size_t) override {
    return used(), std::nullopt;
  }
  kernels::memory_info memory(kernels::memory_kind) const override {
    return used(), kernels::memory_info{};
  }
  void copy_async(kernels::stream_id, void*, const void*, size_t) override { used(); }
  kernels::event_ptr record(kernels::stream_id, kernels::host_callback) override {
    return used(), nullptr;
  }
  void wait_event(kernels::stream_id, const kernels::event_ptr&) override { used(); }
  void synchronize() override { used(); }

private:
  void release(kernels::memory_kind, void*, size_t) override { used(); }
  static void used() { ADD_FAILURE() << "the stand-in CUDA device was used"; }
};

TEST(transformer, the_cuda_pass_refuses_an_f16_kv_cache_by_name) {
  const loaded_model& m = tiny_model(architecture::llama);
  auto cpu = kernels::make_device("cpu");
  ASSERT_TRUE(cpu.has_value());
  auto cache =
    kernels::allocate_kv_cache(**cpu, kernels::memory_kind::device,
                               transformer::cache_shape(m.config, 4, 16, kernels::dtype::f16));
  ASSERT_TRUE(cache.has_value());
  cuda_kind_device cuda;
  auto t = transformer::create(m.config, m.weights, cuda, cache->view, {});
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message.find("CUDA forward pass takes an f32 or bf16 KV cache, not f16"),
            std::string::npos)
    << t.error().message;
  EXPECT_FALSE(transformer::check_cache_dtype(kernels::device_kind::cuda, kernels::dtype::f16));
  EXPECT_TRUE(transformer::check_cache_dtype(kernels::device_kind::cuda, kernels::dtype::bf16));
  EXPECT_TRUE(transformer::check_cache_dtype(kernels::device_kind::cuda, kernels::dtype::f32));
  EXPECT_TRUE(transformer::check_cache_dtype(kernels::device_kind::cpu, kernels::dtype::bf16));
}

TEST(transformer, a_bf16_cache_shape_has_half_the_bytes) {
  const loaded_model& m = tiny_model(architecture::llama);
  const kernels::kv_cache_shape f32 = transformer::cache_shape(m.config, 10, 16);
  const kernels::kv_cache_shape bf16 =
    transformer::cache_shape(m.config, 10, 16, kernels::dtype::bf16);
  EXPECT_EQ(f32.type, kernels::dtype::f32);
  EXPECT_EQ(bf16.type, kernels::dtype::bf16);
  EXPECT_EQ(2 * bf16.total_bytes(), f32.total_bytes());
  EXPECT_EQ(kernels::num_blocks_for_budget(1 << 20, bf16),
            2 * kernels::num_blocks_for_budget(1 << 20, f32));
}

} // namespace
} // namespace kvactor::model
