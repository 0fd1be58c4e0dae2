// Batch invariance of the CPU forward pass: a sequence's K/V and logits are
// bit-identical whatever else shares its steps, however its prompt is
// chunked, and whether a token went through a decode step or was recomputed
// in a prefill (recompute preemption), with an fp32 and with a bf16 KV cache
// (the CPU attention's per-(token, KV head) loop is the same code for decode
// and prefill rows, its tiles start at key 0 of the sequence, and the bf16
// roundings are element by element). Compared bit for bit (memcmp), never
// within a tolerance: a near-tie of two logits must break the same way in
// the serving run as in an undisturbed one.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include "forward_harness.hpp"
#include "model/forward/linear_kernels.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;

// a and b hold the same bits; otherwise says how many floats differ and where.
void expect_bit_equal(std::span<const float> a, std::span<const float> b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  if (std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0) return;
  size_t num_diff = 0;
  std::ostringstream first;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]) && num_diff++ < 3)
      first << " [" << i << "] " << std::hexfloat << a[i] << " vs " << b[i] << std::defaultfloat;
  ADD_FAILURE() << what << ": " << num_diff << " of " << a.size() << " floats differ;"
                << first.str();
}

// Greedy and seeded sampling pick the same tokens from both rows.
void expect_same_tokens(std::span<const float> a, std::span<const float> b, uint64_t step,
                        const std::string& what) {
  EXPECT_EQ(greedy(a), greedy(b)) << what;
  const sampling_params seeded{.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .seed = 1234};
  EXPECT_EQ(sample(a, seeded, step), sample(b, seeded, step)) << what;
}

// Every layer's K and V of positions [0, a.num_cached) agree bit for bit.
void expect_same_cache(const harness& ha, const paged_seq& a, const harness& hb, const paged_seq& b,
                       int64_t num_layers, const std::string& what) {
  ASSERT_EQ(a.num_cached, b.num_cached) << what;
  for (int32_t l = 0; l < num_layers; ++l)
    for (int which = 0; which < 2; ++which)
      expect_bit_equal(ha.cached_rows(a, l, which), hb.cached_rows(b, l, which),
                       what + (which == 0 ? ": K" : ": V") + " of layer " + std::to_string(l));
}

// (style, matrices, KV cache, the products' activations): fp32 or bf16 each;
// then the matrices quantised at load, or not.
class forward_invariance_test
  : public ::testing::TestWithParam<
      std::tuple<architecture, dtype, dtype, dtype, std::optional<quant_format>>> {
protected:
  const loaded_model& m() const {
    return tiny_model(std::get<0>(GetParam()), std::get<1>(GetParam()),
                      shape_for(std::get<4>(GetParam())));
  }
  harness fresh(int64_t num_blocks = 64) const {
    return harness(m(), num_blocks, "cpu", std::get<2>(GetParam()), std::get<3>(GetParam()),
                   {256, 16}, std::get<4>(GetParam()));
  }
  int64_t num_layers() const { return m().config.num_hidden_layers; }
};

TEST_P(forward_invariance_test, a_sequence_alone_or_in_mixed_batches) {
  harness alone = fresh(64), mixed = fresh(256);
  paged_seq a{prompt(29, 21), {}, 0};
  paged_seq b = a;
  // Company for b: long token runs computed in chunks of varied sizes that
  // never reach their end, so only b samples.
  std::vector<paged_seq> company;
  for (int i = 0; i < 6; ++i) company.push_back({prompt(400, 30 + i), {}, 0});

  std::vector<float> la = alone.step({{&a, 29}});
  std::vector<float> lb = mixed.step(
    {{&company[0], 1}, {&company[1], 5}, {&b, 29}, {&company[2], 16}, {&company[3], 40}});
  expect_bit_equal(la, lb, "prefill alone vs in a batch of 5 prompts");

  const int32_t sizes[] = {1, 3, 7, 1, 16, 33, 1, 2};
  for (int step = 0; step < 12; ++step) {
    const std::string what = "decode step " + std::to_string(step);
    expect_same_tokens(la, lb, uint64_t(step), what);
    a.tokens.push_back(greedy(la));
    b.tokens.push_back(greedy(lb));
    la = alone.step({{&a, 1}});
    // Even steps: b decodes beside 1 to 6 other decode-shaped rows (the
    // decode attention layout); odd steps: beside prefill chunks of 1 to 33
    // tokens. b's row moves through the batch.
    std::vector<std::pair<paged_seq*, int32_t>> work;
    for (int i = 0; i < 6; ++i) {
      if ((step + i) % 4 == 3) continue;
      work.push_back({&company[size_t(i)], step % 2 == 0 ? 1 : sizes[(step * 3 + i) % 8]});
    }
    work.insert(work.begin() + step % (work.size() + 1), {&b, 1});
    lb = mixed.step(work);
    expect_bit_equal(la, lb,
                     what + " (" + std::to_string(work.size()) + " sequences in the batch)");
  }
  expect_same_tokens(la, lb, 12, "after the last step");
  expect_same_cache(alone, a, mixed, b, num_layers(), "alone vs mixed batches");
}

TEST_P(forward_invariance_test, prefill_chunking_changes_nothing) {
  constexpr int32_t len = 100;
  // Chunks of 1: the logits of every position, and the K/V to compare with.
  harness h1 = fresh();
  paged_seq s1{prompt(len, 41), {}, 0};
  std::vector<std::vector<float>> at(len);
  for (int32_t p = 0; p < len; ++p) at[size_t(p)] = h1.step({{&s1, 1}}, true);

  for (int32_t chunk : {7, 64, len}) {
    const std::string what = "chunks of " + std::to_string(chunk);
    harness h = fresh();
    paged_seq s{prompt(len, 41), {}, 0};
    while (s.num_cached < len) {
      const std::vector<float> logits = h.step({{&s, std::min(chunk, len - s.num_cached)}}, true);
      expect_bit_equal(logits, at[size_t(s.num_cached - 1)],
                       what + " vs chunks of 1 at position " + std::to_string(s.num_cached - 1));
    }
    expect_same_cache(h, s, h1, s1, num_layers(), what + " vs chunks of 1");
    // Decoding on from either cache gives the same steps.
    harness hd = fresh();
    paged_seq d{prompt(len, 41), {}, 0};
    for (int32_t p = 0; p < len; ++p) hd.step({{&d, 1}});
    std::vector<float> ls = at[len - 1], ld = ls;
    for (int step = 0; step < 3; ++step) {
      s.tokens.push_back(greedy(ls));
      d.tokens.push_back(greedy(ld));
      ls = h.step({{&s, 1}});
      ld = hd.step({{&d, 1}});
      expect_bit_equal(ls, ld,
                       what + ": decode step " + std::to_string(step) + " after the prefill");
    }
  }
}

TEST_P(forward_invariance_test, recomputing_decoded_tokens_as_a_prefill_changes_nothing) {
  harness h = fresh(96);
  // Decode 24 tokens after a 20-token prompt, a riding sequence beside it.
  paged_seq s{prompt(20, 51), {}, 0};
  paged_seq rider{prompt(200, 52), {}, 0};
  std::map<int32_t, std::vector<float>> decoded; // position -> logits
  decoded[19] = h.step({{&s, 20}});
  for (int step = 0; step < 24; ++step) {
    s.tokens.push_back(greedy(decoded[s.num_cached - 1]));
    const std::vector<float> logits = h.step({{&rider, 1 + step % 3}, {&s, 1}});
    decoded[s.num_cached - 1] = logits;
  }
  const auto total = static_cast<int32_t>(s.tokens.size());
  // Recompute preemption: the same tokens again, as a prefill into other
  // blocks, whole or in chunks.
  for (int32_t chunk : {total, 16, 5}) {
    const std::string what = "recomputed in chunks of " + std::to_string(chunk);
    paged_seq r{s.tokens, {}, 0};
    while (r.num_cached < total) {
      const std::vector<float> logits = h.step({{&r, std::min(chunk, total - r.num_cached)}}, true);
      const int32_t pos = r.num_cached - 1;
      if (pos < 19) continue; // inside the prompt: no decode step to compare with
      expect_bit_equal(logits, decoded[pos], what + " vs decoded, position " + std::to_string(pos));
      expect_same_tokens(logits, decoded[pos], uint64_t(pos - 19),
                         what + ", position " + std::to_string(pos));
    }
    expect_same_cache(h, r, h, s, num_layers(), what + " vs decoded");
  }
}

std::string case_name(
  const ::testing::TestParamInfo<forward_invariance_test::ParamType>& p) {
  const auto& [arch, matrices, kv, activations, quantize] = p.param;
  std::string name = std::string(architecture_name(arch)) +
                     (matrices == dtype::f32 ? "_f32" : "_bf16") + "_kv_" + kernels::dtype_name(kv);
  if (activations != dtype::f32) name += "_bf16_activations";
  if (quantize) name += '_';
  if (quantize) name += quant_name(*quantize);
  return name;
}

INSTANTIATE_TEST_SUITE_P(models, forward_invariance_test,
                         ::testing::Combine(::testing::Values(architecture::llama,
                                                              architecture::qwen3),
                                            ::testing::Values(dtype::f32, dtype::bf16),
                                            ::testing::Values(dtype::f32, dtype::bf16),
                                            ::testing::Values(dtype::f32, dtype::bf16),
                                            ::testing::Values(std::optional<quant_format>())),
                         case_name);

// A bf16 checkpoint quantised at load, as `--weights=q8_0|q4_0` serves it,
// and to the K formats (on the wide tiny models).
INSTANTIATE_TEST_SUITE_P(quantised, forward_invariance_test,
                         ::testing::Combine(::testing::Values(architecture::llama,
                                                              architecture::qwen3),
                                            ::testing::Values(dtype::bf16),
                                            ::testing::Values(dtype::f32, dtype::bf16),
                                            ::testing::Values(dtype::f32),
                                            ::testing::Values(std::optional(quant_format::q8_0),
                                                              std::optional(quant_format::q4_0),
                                                              std::optional(quant_format::q5_0),
                                                              std::optional(quant_format::q5_1),
                                                              std::optional(quant_format::q2_k),
                                                              std::optional(quant_format::q3_k),
                                                              std::optional(quant_format::q4_k),
                                                              std::optional(quant_format::q5_k),
                                                              std::optional(quant_format::q6_k),
                                                              std::optional(quant_format::iq4_nl),
                                                              std::optional(quant_format::iq4_xs))),
                         case_name);

} // namespace
} // namespace kvactor::model
