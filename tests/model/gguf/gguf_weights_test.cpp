// model_weights::load_gguf: the tiny models exported as GGUF files (as
// llama.cpp's converter lays them out) load back to the weights they came
// from, so the forward pass gives the same bits; and each refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "model/gguf/gguf_config.hpp"
#include "model/gguf/gguf_export.hpp"
#include "model/gguf/gguf_file.hpp"
#include "model/rope.hpp"
#include "tests/model/forward_harness.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using namespace test_support;

struct gguf_model {
  model_config config;
  std::shared_ptr<const gguf_file> file;
  std::unique_ptr<loaded_model> loaded; // config and weights (the tokenizer unused)
};

gguf_model export_and_load(const loaded_model& m, const gguf_matrices& q,
                           const std::filesystem::path& path) {
  const status s = export_gguf(m.config, m.weights, q, gguf_writer{}, path);
  KVACTOR_ASSERT(s, "exporting the GGUF file failed");
  gguf_model g;
  auto f = gguf_file::open(path);
  KVACTOR_ASSERT(f.has_value(), "opening the GGUF file failed");
  g.file = std::make_shared<const gguf_file>(std::move(*f));
  auto config = gguf_model_config(*g.file);
  KVACTOR_ASSERT(config.has_value(), "the GGUF config");
  g.config = *config;
  auto w = model_weights::load_gguf(g.config, g.file);
  if (!w) std::fprintf(stderr, "%s\n", w.error().message.c_str());
  KVACTOR_ASSERT(w.has_value(), "loading the GGUF weights failed");
  g.loaded = std::make_unique<loaded_model>(loaded_model{g.config, m.tok, std::move(*w)});
  return g;
}

// Two prompts prefilled, then decode steps: both passes' logits, bit for bit.
void expect_same_logits(harness& a, harness& b) {
  paged_seq a1{prompt(21, 3), {}, 0}, a2{prompt(4, 5), {}, 0};
  paged_seq b1 = a1, b2 = a2;
  std::vector<float> la = a.step({{&a1, 21}, {&a2, 4}});
  std::vector<float> lb = b.step({{&b1, 21}, {&b2, 4}});
  for (int step = 0; step < 4; ++step) {
    ASSERT_EQ(la, lb) << "step " << step;
    for (auto [sa, sb, i] : {std::tuple{&a1, &b1, 0}, std::tuple{&a2, &b2, 1}}) {
      const token_id t = greedy(row(la, i, a.vocab()));
      sa->tokens.push_back(t);
      sb->tokens.push_back(t);
    }
    la = a.step({{&a1, 1}, {&a2, 1}});
    lb = b.step({{&b1, 1}, {&b2, 1}});
  }
}

class gguf_weights_test : public ::testing::TestWithParam<architecture> {};

TEST_P(gguf_weights_test, an_fp32_file_gives_the_checkpoints_logits) {
  const loaded_model& m = tiny_model(GetParam());
  temp_dir dir;
  const gguf_model g = export_and_load(m, gguf_matrices(), dir.path() / "m.gguf");
  EXPECT_EQ(g.config.hidden_size, m.config.hidden_size);
  EXPECT_EQ(g.config.tie_word_embeddings, m.config.tie_word_embeddings);
  EXPECT_EQ(g.config.has_qkv_bias(), m.config.has_qkv_bias());
  harness from_safetensors(m), from_gguf(*g.loaded);
  expect_same_logits(from_safetensors, from_gguf);
}

INSTANTIATE_TEST_SUITE_P(styles, gguf_weights_test,
                         ::testing::Values(architecture::llama, architecture::qwen2,
                                           architecture::qwen3),
                         [](const ::testing::TestParamInfo<architecture>& p) {
                           return std::string(architecture_name(p.param));
                         });

// The untied Llama model: its file's blocks are the ones the checkpoint
// quantised at load holds, so the two passes agree bit for bit; the q and k
// blocks come back in Hugging Face's row order.
TEST(gguf_weights, quantised_files_are_the_checkpoint_quantised_at_load) {
  const loaded_model& m = tiny_model(architecture::llama);
  for (quant_format q : {quant_format::q8_0, quant_format::q4_0, quant_format::q4_1,
                         quant_format::q5_0, quant_format::q5_1, quant_format::iq4_nl}) {
    temp_dir dir;
    const gguf_model g = export_and_load(m, gguf_matrices(q), dir.path() / "m.gguf");
    const layer_weights& l0 = g.loaded->weights.layers()[0];
    EXPECT_EQ(l0.q_proj.quant, q);
    EXPECT_EQ(l0.down_proj.quant, q);
    EXPECT_EQ(g.loaded->weights.lm_head().quant, q);
    EXPECT_FALSE(g.loaded->weights.embed_tokens().quant);
    harness at_load(m, 64, "cpu", kernels::dtype::f32, dtype::f32, {256, 16}, q);
    harness from_gguf(*g.loaded);
    expect_same_logits(at_load, from_gguf);
  }
}

// The K formats likewise, on the wide Llama model (rows of whole 256-value
// super-blocks).
TEST(gguf_weights, k_format_files_are_the_checkpoint_quantised_at_load) {
  const loaded_model& m = tiny_model(architecture::llama, dtype::f32, tiny_shape::wide);
  for (quant_format q : {quant_format::q2_k, quant_format::q3_k, quant_format::q4_k,
                         quant_format::q5_k, quant_format::q6_k, quant_format::iq4_xs}) {
    temp_dir dir;
    const gguf_model g = export_and_load(m, gguf_matrices(q), dir.path() / "m.gguf");
    EXPECT_EQ(g.loaded->weights.layers()[1].v_proj.quant, q);
    EXPECT_EQ(g.loaded->weights.lm_head().quant, q);
    harness at_load(m, 64, "cpu", kernels::dtype::f32, dtype::f32, {256, 16}, q);
    harness from_gguf(*g.loaded);
    expect_same_logits(at_load, from_gguf);
  }
}

// The worst relative L2 distance of `got`'s logits from `want`'s over a
// 21-token prompt and 6 greedy steps (`want`'s tokens).
double worst_distance(const loaded_model& got_model, const loaded_model& want_model) {
  harness got_pass(got_model), want_pass(want_model);
  paged_seq a{prompt(21, 3), {}, 0}, b = a;
  double worst = 0;
  std::vector<float> got = got_pass.step({{&a, 21}}), want = want_pass.step({{&b, 21}});
  for (int step = 0; step < 6; ++step) {
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      norm += double(want[i]) * want[i];
    }
    worst = std::max(worst, std::sqrt(err / norm));
    const token_id t = greedy(row(want, 0, want_pass.vocab()));
    a.tokens.push_back(t);
    b.tokens.push_back(t);
    got = got_pass.step({{&a, 1}});
    want = want_pass.step({{&b, 1}});
  }
  return worst;
}

// A quantised file's distance from the fp32 pass over the file's own values
// (the file exported again in fp32): only the activations' 8-bit rounding
// differs, so the logits stay close; a part multiplied in the wrong format,
// or its rows in the wrong place, would not.
double distance_from_its_values(const gguf_model& quantised_file, const temp_dir& dir) {
  const gguf_model values =
    export_and_load(*quantised_file.loaded, gguf_matrices(), dir.path() / "f32.gguf");
  return worst_distance(*quantised_file.loaded, *values.loaded);
}

// The `mix` file of `m`: its matrices in `base` but for layer 0's v and
// ffn_down and the head in `wider`, and its logits near the fp32 pass over
// its own values (the quantised embedding's rows looked up, and multiplied
// as the head where it is tied).
void expect_mix(const loaded_model& m, const char* mix, quant_format base, quant_format wider) {
  temp_dir dir;
  const gguf_model mixed = export_and_load(m, *gguf_matrices::parse(mix), dir.path() / "m.gguf");
  const std::vector<layer_weights>& layers = mixed.loaded->weights.layers();
  EXPECT_EQ(layers[0].q_proj.quant, base) << mix;
  EXPECT_EQ(layers[0].v_proj.quant, wider) << mix;
  EXPECT_EQ(layers[0].down_proj.quant, wider) << mix;
  EXPECT_EQ(layers[1].v_proj.quant, base) << mix;
  EXPECT_EQ(layers[1].down_proj.quant, base) << mix;
  // The embedding too: untied in the base format, tied as the head.
  const model_weights& w = mixed.loaded->weights;
  EXPECT_EQ(w.lm_head().quant, wider) << mix;
  EXPECT_EQ(w.embed_tokens().quant, m.config.tie_word_embeddings ? wider : base) << mix;
  EXPECT_EQ(w.lm_head().data == w.embed_tokens().data, m.config.tie_word_embeddings) << mix;
  const double worst = distance_from_its_values(mixed, dir);
  EXPECT_GT(worst, 0.0) << mix;
  // NOTE: measured 0.009-0.020 (Qwen3's the most); a matrix in the wrong
  // format or its rows out of place moves the logits by far more.
  EXPECT_LT(worst, 0.03) << mix;
}

// Q4_K_M's and Q5_K_M's mixes: Q6_K beside Q4_K (Q5_K) in one stack (layer
// 0's q | k | v), alone (ffn_down) and as the head.
TEST(gguf_weights, k_mix_files_mix_formats_within_a_stack) {
  const loaded_model& m = tiny_model(architecture::llama, dtype::f32, tiny_shape::wide);
  expect_mix(m, "q4_k_m", quant_format::q4_k, quant_format::q6_k);
  expect_mix(m, "q5_k_m", quant_format::q5_k, quant_format::q6_k);
  const loaded_model& tied = tiny_model(architecture::qwen3, dtype::f32, tiny_shape::wide);
  ASSERT_TRUE(tied.config.tie_word_embeddings);
  expect_mix(tied, "q4_k_m", quant_format::q4_k, quant_format::q6_k);
}

// IQ4_XS on rows narrower than a super-block falls back to IQ4_NL, as
// llama-quantize writes it; the small model's o_proj rows (its attention
// width, 256) stay IQ4_XS. The file's logits are near the fp32 pass over
// its own values.
TEST(gguf_weights, iq4_xs_files_of_narrow_rows_hold_iq4_nl_blocks) {
  const loaded_model& m = tiny_model(architecture::llama);
  temp_dir dir;
  const gguf_model g =
    export_and_load(m, gguf_matrices(quant_format::iq4_xs), dir.path() / "m.gguf");
  for (const layer_weights& l : g.loaded->weights.layers()) {
    EXPECT_EQ(l.q_proj.quant, quant_format::iq4_nl);
    EXPECT_EQ(l.o_proj.quant, quant_format::iq4_xs);
    EXPECT_EQ(l.down_proj.quant, quant_format::iq4_nl);
  }
  EXPECT_EQ(g.loaded->weights.lm_head().quant, quant_format::iq4_nl);
  const double worst = distance_from_its_values(g, dir);
  EXPECT_GT(worst, 0.0);
  EXPECT_LT(worst, 0.03);
}

// On rows narrower than a super-block (the small model: 128 and 192 wide),
// Q4_K_M and Q5_K_M fall back as llama-quantize does (models such as
// Qwen2.5-0.5B, 896 wide, come so): Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for
// Q6_K.
TEST(gguf_weights, k_mix_files_of_narrow_rows_hold_32_value_blocks) {
  const loaded_model& m = tiny_model(architecture::llama);
  expect_mix(m, "q4_k_m", quant_format::q5_0, quant_format::q8_0);
  expect_mix(m, "q5_k_m", quant_format::q5_1, quant_format::q8_0);
  const loaded_model& tied = tiny_model(architecture::qwen2);
  ASSERT_TRUE(tied.config.tie_word_embeddings);
  expect_mix(tied, "q4_k_m", quant_format::q5_0, quant_format::q8_0);
}

// Llama 3.1's llama3 RoPE scaling travels as llama.cpp's converter writes
// it, each frequency's divisor in rope_freqs.weight: the file's pass gives
// the checkpoint's logits up to the divisors' fp32 rounding, far closer than
// the same weights without the scaling (whose wrong angles a file read
// without its divisors would have). An original context of 16 puts the
// prompt's positions past it, where the scaling turns every angle.
TEST(gguf_weights, llama3_rope_scaling_travels_as_frequency_divisors) {
  const auto load = [](const temp_dir& dir, struct rope_scaling rs) {
    tiny::tiny_options o = tiny_options_of(architecture::llama, tiny_shape::small);
    o.rope_scaling = rs;
    KVACTOR_ASSERT(tiny::write_model(dir.path(), o), "writing the tiny model failed");
    auto m = load_model_folder(dir.path(), dtype::f32);
    KVACTOR_ASSERT(m.has_value(), "loading the tiny model failed");
    return std::make_unique<loaded_model>(std::move(m).value());
  };
  struct rope_scaling llama3;
  llama3.type = rope_scaling::kind::llama3;
  llama3.factor = 8;
  llama3.high_freq_factor = 4;
  llama3.original_max_position_embeddings = 16;
  temp_dir scaled_dir, plain_dir;
  const auto scaled = load(scaled_dir, llama3), plain = load(plain_dir, {});
  const gguf_model g = export_and_load(*scaled, gguf_matrices(), scaled_dir.path() / "m.gguf");
  ASSERT_EQ(g.config.rope_scaling.frequency_divisors.size(), 32u);
  const std::vector<double> want = rope_inv_freq(scaled->config), got = rope_inv_freq(g.config);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i] / want[i], 1.0, 1e-7) << i;
  EXPECT_NE(got.back(), rope_inv_freq(plain->config).back());
  const double from_file = worst_distance(*g.loaded, *scaled);
  const double unscaled = worst_distance(*plain, *scaled);
  EXPECT_LT(from_file, 1e-5);
  EXPECT_GT(unscaled, 100 * from_file + 1e-3);
}

// Llama's q and k rows come back reordered into memory the weights own;
// once a CPU pass has packed them, releasing frees that memory and empties
// the matrices, while the embedding (and the head tied to it), the norms
// and the pass itself go on as before.
TEST(gguf_weights, releasing_packed_matrices_frees_the_reordered_rows) {
  for (architecture arch : {architecture::llama, architecture::qwen3}) {
    const loaded_model& m = tiny_model(arch);
    temp_dir dir;
    gguf_model g = export_and_load(m, gguf_matrices(quant_format::q8_0), dir.path() / "m.gguf");
    model_weights& w = g.loaded->weights;
    const layer_weights& l0 = w.layers()[0];
    // Llama's q and k of every layer (Qwen's rows are not reordered).
    const std::size_t reordered =
      arch == architecture::llama
        ? quant_row_bytes(quant_format::q8_0, m.config.hidden_size) *
            static_cast<std::size_t>((m.config.q_size() + m.config.kv_size()) *
                                     m.config.num_hidden_layers)
        : 0;
    EXPECT_EQ(w.num_owned_bytes(), reordered);
    harness packed(*g.loaded);
    paged_seq a{prompt(21, 3), {}, 0};
    const std::vector<float> before = packed.step({{&a, 21}});
    w.release_packed_matrices();
    EXPECT_EQ(w.num_owned_bytes(), 0u);
    EXPECT_EQ(l0.q_proj.data, nullptr);
    EXPECT_EQ(l0.down_proj.data, nullptr);
    EXPECT_NE(w.embed_tokens().data, nullptr);
    EXPECT_NE(l0.input_layernorm.data, nullptr);
    EXPECT_EQ(w.lm_head().data == nullptr, !m.config.tie_word_embeddings);
    paged_seq b{prompt(21, 3), {}, 0};
    EXPECT_EQ(packed.step({{&b, 21}}), before) << "the packed pass reads no released matrix";
  }
}

// A file that disagrees with the config it is loaded under.
TEST(gguf_weights, refusals_name_the_tensor) {
  const loaded_model& m = tiny_model(architecture::llama);
  temp_dir dir;
  const gguf_model g = export_and_load(m, gguf_matrices(quant_format::q8_0), dir.path() / "m.gguf");
  // Another model's config: the tensors' dims disagree.
  model_config wider = g.config;
  wider.intermediate_size *= 2;
  auto w = model_weights::load_gguf(wider, g.file);
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message, HasSubstr("blk.0.ffn_gate.weight"));
  EXPECT_THAT(w.error().message, HasSubstr("disagree with the metadata"));
  // A Qwen2 config over a Llama file: the biases are missing.
  model_config qwen2 = g.config;
  qwen2.arch = architecture::qwen2;
  w = model_weights::load_gguf(qwen2, g.file);
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message, HasSubstr("blk.0.attn_q.bias"));
  EXPECT_THAT(w.error().message, HasSubstr("missing"));
}

// The tiny Llama model's fp32 export with tensor `name`'s type id changed
// in its table entry to `type`, loaded: a block type's rows take fewer
// bytes than the fp32 data the entry points at, so the file stays valid.
result<model_weights> load_retyped(const std::string& name, ggml_type type,
                                   const std::filesystem::path& path) {
  const loaded_model& m = tiny_model(architecture::llama);
  KVACTOR_ASSERT(export_gguf(m.config, m.weights, gguf_matrices(), gguf_writer{}, path),
                 "exporting the GGUF file failed");
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = bytes.find(name);
  KVACTOR_ASSERT(at != std::string::npos, "the tensor is in the file");
  const std::size_t type_at = at + name.size() + 4 + 2 * 8; // u32 n_dims, u64 dims[2]
  const auto id = static_cast<uint32_t>(type);
  std::memcpy(bytes.data() + type_at, &id, sizeof id);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto f = gguf_file::open(path);
  KVACTOR_ASSERT(f.has_value(), "the retyped file opens");
  auto file = std::make_shared<const gguf_file>(std::move(*f));
  auto config = gguf_model_config(*file);
  KVACTOR_ASSERT(config.has_value(), "the retyped file's config");
  return model_weights::load_gguf(*config, file);
}

// IQ3_S: a type kvactor does not compute with.
TEST(gguf_weights, a_type_kvactor_does_not_compute_with_is_named) {
  temp_dir dir;
  auto w = load_retyped("blk.0.attn_output.weight", ggml_type::iq3_s, dir.path() / "m.gguf");
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message, HasSubstr("blk.0.attn_output.weight"));
  EXPECT_THAT(w.error().message, HasSubstr("type IQ3_S is not one kvactor computes with"));
  // Every type it does compute with, listed from the formats themselves.
  EXPECT_THAT(w.error().message,
              HasSubstr("(F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, "
                        "Q6_K, IQ4_NL, IQ4_XS)"));
}

// A stack multiplied as one may mix quantised formats, not quantised and
// dense matrices.
TEST(gguf_weights, a_stack_of_quantised_and_dense_matrices_is_refused) {
  temp_dir dir;
  auto w = load_retyped("blk.0.attn_v.weight", ggml_type::q8_0, dir.path() / "m.gguf");
  ASSERT_FALSE(w.has_value());
  EXPECT_THAT(w.error().message, HasSubstr("blk.0.attn_q, attn_v"));
  EXPECT_THAT(w.error().message, HasSubstr("all quantised or all of one dense type"));
}

} // namespace
} // namespace kvactor::model
