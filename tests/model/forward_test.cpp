// The proof that paging is right: the paged forward pass (batched, chunked,
// through the KV-cache kernels) against a dense reference written plainly in
// double (dense_reference.hpp), on small Llama- and Qwen3-style tiny models.
// Same greedy tokens, logits within tolerance.
#include <gtest/gtest.h>

#include "forward_harness.hpp"
#include "kernels/ops.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;

class forward_test : public ::testing::TestWithParam<architecture> {
protected:
  const loaded_model& m() const { return tiny_model(GetParam()); }

  // Greedy decode of `seqs` together for `num_steps`, each checked against its reference.
  void decode_together(harness& h, std::vector<paged_seq*> seqs, std::vector<dense_reference*> refs,
                       std::vector<float> logits, int num_steps) {
    for (int step = 0; step < num_steps; ++step) {
      std::vector<std::pair<paged_seq*, int32_t>> work;
      for (size_t i = 0; i < seqs.size(); ++i) {
        const std::vector<double> want = catch_up(*refs[i], *seqs[i]);
        const token_id got = greedy(row(logits, int64_t(i), h.vocab()));
        EXPECT_EQ(got, argmax(want)) << "seq " << i << " step " << step;
        seqs[i]->tokens.push_back(got);
        work.push_back({seqs[i], 1});
      }
      logits = h.step(work);
      for (size_t i = 0; i < seqs.size(); ++i)
        expect_close(row(logits, int64_t(i), h.vocab()), catch_up(*refs[i], *seqs[i]),
                     "seq " + std::to_string(i) + " decode " + std::to_string(step));
    }
  }
};

TEST_P(forward_test, one_sequence) {
  harness h(m());
  dense_reference ref(m().config, m().weights);
  paged_seq s{prompt(23, 1), {}, 0};
  std::vector<float> logits = h.step({{&s, 23}});
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, s), "prefill");
  decode_together(h, {&s}, {&ref}, logits, 10); // crosses into the third block
}

TEST_P(forward_test, batch_of_mixed_lengths) {
  harness h(m());
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
    expect_close(row(logits, int64_t(i), h.vocab()), catch_up(*refs[i], seqs[i]), "prefill " + std::to_string(i));
  std::vector<paged_seq*> ps;
  std::vector<dense_reference*> rs;
  for (size_t i = 0; i < seqs.size(); ++i) ps.push_back(&seqs[i]), rs.push_back(refs[i].get());
  decode_together(h, ps, rs, logits, 6);
}

TEST_P(forward_test, prefill_in_chunks) {
  for (int32_t chunk : {1, 7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    harness h(m());
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
      expect_close(row(logits, 0, h.vocab()), catch_up(other_ref, other), "riding decode");
    }
    expect_close(row(logits, 1, h.vocab()), catch_up(ref, s), "chunked prefill");
    decode_together(h, {&s}, {&ref}, std::vector<float>(logits.begin() + h.vocab(), logits.end()), 3);
  }
}

TEST_P(forward_test, prefix_cache_hit) {
  harness h(m());
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
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, b), "suffix after a prefix hit");
  decode_together(h, {&b}, {&ref}, logits, 3);
}

TEST_P(forward_test, swapped_out_and_back_into_other_blocks) {
  harness h(m());
  dense_reference ref(m().config, m().weights);
  paged_seq s{prompt(37, 8), {}, 0};
  std::vector<float> logits = h.step({{&s, 37}});
  decode_together(h, {&s}, {&ref}, logits, 2);
  const token_id next = argmax(catch_up(ref, s));

  auto host = kernels::allocate_kv_cache(h.dev(), kernels::memory_kind::pinned_host,
                                         transformer::cache_shape(m().config, 8, block_size));
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
        std::fill_n(static_cast<float*>(h.cache().block(l, w, p.src)), h.cache().shape.block_bytes() / 4, 1e3f);
  kernels::swap_blocks(h.dev(), kernels::streams::swap_in, host->view, h.cache(), in)->wait();
  s.table = new_table;

  s.tokens.push_back(next);
  logits = h.step({{&s, 1}});
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, s), "first step after swap-in");
  decode_together(h, {&s}, {&ref}, logits, 3);
}

TEST_P(forward_test, fork_after_copy_on_write) {
  harness h(m());
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
  expect_close(row(logits, 0, h.vocab()), catch_up(parent_ref, parent), "parent after fork");
  expect_close(row(logits, 1, h.vocab()), catch_up(child_ref, child), "child after fork");
  decode_together(h, {&parent, &child}, {&parent_ref, &child_ref}, logits, 4);
}

TEST_P(forward_test, bf16_matrices_give_the_fp32_results) {
  // The checkpoint is bf16 on disk: fp32 matrices hold exactly its values widened.
  const loaded_model& m16 = tiny_model(GetParam(), dtype::bf16);
  ASSERT_EQ(m16.weights.layers()[0].q_proj.type, dtype::bf16);
  harness h32(m()), h16(m16);
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
  const loaded_model& m16 = tiny_model(GetParam(), dtype::bf16);
  harness exact(m16), rounded(m16, 64, "cpu", dtype::bf16);
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
  harness h(m());
  paged_seq a{prompt(10, 11), {}, 0}, b{prompt(12, 12), {}, 0};
  const std::vector<float> logits = h.step({{&a, 5}, {&b, 12}}); // a mid-prefill: no sample
  EXPECT_EQ(logits.size(), size_t(h.vocab()));
  dense_reference ref(m().config, m().weights);
  expect_close(row(logits, 0, h.vocab()), catch_up(ref, b), "the one sampling row");
}

INSTANTIATE_TEST_SUITE_P(styles, forward_test, ::testing::Values(architecture::llama, architecture::qwen3),
                         [](const auto& p) { return std::string(architecture_name(p.param)); });

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

} // namespace
} // namespace kvactor::model
