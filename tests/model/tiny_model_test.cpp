#include "model/tiny/tiny_model.hpp"

#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model_folder.hpp"
#include "model/tiny/tiny_args.hpp"
#include "model/tiny/tiny_tokenizer.hpp"
#include "model/tokenizer/incremental_decoder.hpp"
#include "tests/model/temp_dir.hpp"

namespace kvactor::model::tiny {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;

tiny_options small(architecture arch) {
  tiny_options o;
  o.arch = arch;
  o.hidden_size = 64;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = arch == architecture::qwen3 ? 32 : 16;
  o.intermediate_size = 96;
  o.vocab_size = 700;
  o.max_context = 256;
  o.seed = 11;
  return o;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string_view> argv_of(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

class tiny_round_trip : public ::testing::TestWithParam<architecture> {};

TEST_P(tiny_round_trip, folder_loads_with_the_generators_values) {
  const auto o = small(GetParam());
  temp_dir dir;
  ASSERT_TRUE(write_model(dir.path(), o));
  auto m = load_model_folder(dir.path(), dtype::f32);
  ASSERT_TRUE(m) << m.error().message;

  const model_config& c = m->config;
  EXPECT_EQ(c.arch, o.arch);
  EXPECT_EQ(c.hidden_size, o.hidden_size);
  EXPECT_EQ(c.num_hidden_layers, o.num_layers);
  EXPECT_EQ(c.num_attention_heads, o.num_heads);
  EXPECT_EQ(c.num_key_value_heads, o.num_kv_heads);
  EXPECT_EQ(c.head_dim, o.head_dim);
  EXPECT_EQ(c.intermediate_size, o.intermediate_size);
  EXPECT_EQ(c.vocab_size, o.vocab_size);
  EXPECT_EQ(c.max_position_embeddings, o.max_context);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.bos_token_id, bos_id(o));
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{eos_id(o)});

  // Tokenizer: exactly vocab_size ids, specials where the config says.
  EXPECT_EQ(m->tok.vocab_size(), static_cast<std::size_t>(o.vocab_size));
  EXPECT_EQ(m->tok.find(bos_token), bos_id(o));
  EXPECT_EQ(m->tok.find(eos_token), eos_id(o));
  EXPECT_TRUE(m->tok.is_special(static_cast<token_id>(eos_id(o))));
  const std::string text = "The harbour town woke slowly.<|endoftext|> Naïve café, 2024! 🙂";
  const auto ids = m->tok.encode(text);
  EXPECT_EQ(m->tok.decode(ids), text);
  EXPECT_LT(ids.size(), text.size() / 2); // learned merges compress English
  incremental_decoder d(m->tok);
  std::string streamed;
  for (auto id : ids) streamed += d.push(id);
  EXPECT_EQ(streamed + d.flush(), text);

  // Weights: bf16 on disk, widened exactly to fp32.
  const auto specs = tensor_specs(o);
  auto check = [&](const weight_view& v, const tensor_spec& spec) {
    const auto want = tensor_values(o, spec);
    ASSERT_EQ(static_cast<std::size_t>(v.num_elements()), want.size()) << spec.name;
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(v.f32()[i], bf16_to_f32(f32_to_bf16(want[i]))) << spec.name << "[" << i << "]";
  };
  check(m->weights.embed_tokens(), specs.front());
  check(m->weights.lm_head(), specs.back());
  for (const auto& spec : specs) {
    if (spec.name == "model.layers.1.mlp.down_proj.weight")
      check(m->weights.layers()[1].down_proj, spec);
    if (spec.name == "model.layers.0.input_layernorm.weight")
      check(m->weights.layers()[0].input_layernorm, spec);
    if (spec.name == "model.layers.1.self_attn.k_norm.weight")
      check(*m->weights.layers()[1].k_norm, spec);
  }
}

INSTANTIATE_TEST_SUITE_P(model, tiny_round_trip,
                         ::testing::Values(architecture::llama, architecture::qwen3));

TEST(tiny_model, writes_the_side_files_transformers_reads) {
  const auto o = small(architecture::llama);
  temp_dir dir;
  ASSERT_TRUE(write_model(dir.path(), o));
  const std::string gen = read_all(dir / "generation_config.json");
  EXPECT_THAT(gen, HasSubstr("\"eos_token_id\": " + std::to_string(eos_id(o))));
  EXPECT_THAT(gen, HasSubstr("\"bos_token_id\": " + std::to_string(bos_id(o))));
  const std::string tc = read_all(dir / "tokenizer_config.json");
  EXPECT_THAT(tc, HasSubstr("\"eos_token\": \"<|endoftext|>\""));
  EXPECT_THAT(tc, HasSubstr("\"model_max_length\": 256"));
}

TEST(tiny_model, weights_look_like_an_initialised_model) {
  const auto o = small(architecture::llama);
  const auto specs = tensor_specs(o);
  const auto q = tensor_values(o, specs[2]); // layer 0 q_proj
  double sum = 0, sum_sq = 0;
  for (float x : q) {
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  const double mean = sum / q.size(), sd = std::sqrt(sum_sq / q.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(sd, 0.02, 0.002);
  const auto norm = tensor_values(o, specs[1]); // input_layernorm
  ASSERT_TRUE(specs[1].is_norm);
  for (float x : norm) EXPECT_NEAR(x, 1.0, 0.3);
}

TEST(tiny_model, deterministic_per_seed) {
  auto o = small(architecture::llama);
  temp_dir a, b, c;
  ASSERT_TRUE(write_model(a.path(), o));
  ASSERT_TRUE(write_model(b.path(), o));
  o.seed = 12;
  ASSERT_TRUE(write_model(c.path(), o));
  for (const char* f : {"config.json", "tokenizer.json", "model.safetensors"})
    EXPECT_EQ(read_all(a / f), read_all(b / f)) << f;
  EXPECT_NE(read_all(a / "model.safetensors"), read_all(c / "model.safetensors"));
  EXPECT_EQ(read_all(a / "tokenizer.json"), read_all(c / "tokenizer.json"));
}

TEST(tiny_model, every_shape_option_is_honoured) {
  tiny_options o;
  o.hidden_size = 48;
  o.num_layers = 3;
  o.num_heads = 6;
  o.num_kv_heads = 2;
  o.head_dim = 10; // not hidden / heads: config.json must say head_dim
  o.intermediate_size = 40;
  o.vocab_size = 300;
  o.max_context = 128;
  o.on_disk = dtype::f16;
  o.tie_embeddings = true;
  temp_dir dir;
  ASSERT_TRUE(write_model(dir.path(), o));
  auto m = load_model_folder(dir.path(), dtype::bf16);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->config.head_dim, 10);
  EXPECT_EQ(m->config.q_size(), 60);
  EXPECT_EQ(m->config.torch_dtype, "float16");
  EXPECT_TRUE(m->config.tie_word_embeddings);
  EXPECT_EQ(m->weights.layers().size(), 3u);
  EXPECT_EQ(m->weights.layers()[2].o_proj.rows(), 48);
  EXPECT_EQ(m->weights.layers()[2].o_proj.cols(), 60);
  EXPECT_EQ(m->weights.lm_head().data, m->weights.embed_tokens().data);
  EXPECT_EQ(m->tok.vocab_size(), 300u);
}

TEST(tiny_model, rope_scaling_is_written_as_transformers_writes_it) {
  for (const char* arg : {"--rope-scaling=linear:2.5", "--rope-scaling=llama3:64"}) {
    const std::vector<std::string> argv = {"--out=x", "--hidden=64", "--heads=2",
                                           "--kv-heads=1", "--head-dim=32", arg};
    const auto args = argv_of(argv);
    auto a = parse_args(args);
    ASSERT_TRUE(a) << a.error().message;
    temp_dir dir;
    ASSERT_TRUE(write_model(dir.path(), a->options));
    auto m = load_model_folder(dir.path(), dtype::f32);
    ASSERT_TRUE(m) << m.error().message;
    const struct rope_scaling& rs = m->config.rope_scaling;
    if (a->options.rope_scaling.type == rope_scaling::kind::linear) {
      EXPECT_EQ(rs.type, rope_scaling::kind::linear);
      EXPECT_DOUBLE_EQ(rs.factor, 2.5);
    } else {
      EXPECT_EQ(rs.type, rope_scaling::kind::llama3);
      EXPECT_DOUBLE_EQ(rs.factor, 8);
      EXPECT_DOUBLE_EQ(rs.low_freq_factor, 1);
      EXPECT_DOUBLE_EQ(rs.high_freq_factor, 4);
      EXPECT_EQ(rs.original_max_position_embeddings, 64);
    }
  }
}

TEST(tiny_model, sharded_checkpoint_loads_through_its_index) {
  auto o = small(architecture::qwen3);
  o.num_shards = 3;
  temp_dir dir;
  ASSERT_TRUE(write_model(dir.path(), o));
  for (const char* f : {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                        "model-00003-of-00003.safetensors", "model.safetensors.index.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_FALSE(std::filesystem::exists(dir / "model.safetensors"));
  auto files = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->num_files(), 3u);
  EXPECT_EQ(files->num_tensors(), tensor_specs(o).size());
  EXPECT_EQ(files->get("lm_head.weight")->file->filename(), "model-00003-of-00003.safetensors");
  auto m = load_model_folder(dir.path());
  ASSERT_TRUE(m) << m.error().message;
  const auto specs = tensor_specs(o);
  const auto want = tensor_values(o, specs.back());
  EXPECT_EQ(m->weights.lm_head().f32()[5], bf16_to_f32(f32_to_bf16(want[5])));

  // Rewriting the folder unsharded removes the shards and their index.
  o.num_shards = 1;
  ASSERT_TRUE(write_model(dir.path(), o));
  EXPECT_FALSE(std::filesystem::exists(dir / "model.safetensors.index.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "model-00001-of-00003.safetensors"));
  auto single = safetensors_set::open_folder(dir.path());
  ASSERT_TRUE(single) << single.error().message;
  EXPECT_EQ(single->num_files(), 1u);
}

TEST(tiny_model, default_tokenizer_fills_the_vocabulary_with_learned_tokens) {
  const auto spec = make_tokenizer_spec(tiny_options{});
  EXPECT_EQ(spec.vocab.size() + spec.added_tokens.size(), 4096u);
  EXPECT_GT(spec.merges.size(), 3000u); // learned, not reserved padding
}

TEST(tiny_args, parses_every_option) {
  const std::vector<std::string> argv = {
    "--out=/tmp/m", "--style=qwen3",        "--hidden=256",   "--layers=4",
    "--heads=4",    "--kv-heads=2",         "--head-dim=128", "--intermediate=512",
    "--vocab=1000", "--context=2048",       "--dtype=f32",    "--tied",
    "--seed=9",     "--rope-theta=1000000", "--shards=2"};
  const auto args = argv_of(argv);
  auto a = parse_args(args);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->out, "/tmp/m");
  const auto& o = a->options;
  EXPECT_EQ(o.arch, architecture::qwen3);
  EXPECT_EQ(o.hidden_size, 256);
  EXPECT_EQ(o.num_layers, 4);
  EXPECT_EQ(o.num_heads, 4);
  EXPECT_EQ(o.num_kv_heads, 2);
  EXPECT_EQ(o.head_dim, 128);
  EXPECT_EQ(o.intermediate_size, 512);
  EXPECT_EQ(o.vocab_size, 1000);
  EXPECT_EQ(o.max_context, 2048);
  EXPECT_EQ(o.on_disk, dtype::f32);
  EXPECT_TRUE(o.tie_embeddings);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_DOUBLE_EQ(o.rope_theta, 1e6);
  EXPECT_EQ(o.num_shards, 2);
}

TEST(tiny_args, rejects_bad_options) {
  auto err = [](std::vector<std::string> argv) {
    const auto args = argv_of(argv);
    auto a = parse_args(args);
    EXPECT_FALSE(a);
    return a ? std::string() : a.error().message;
  };
  EXPECT_THAT(err({"--hidden=64"}), HasSubstr("--out"));
  EXPECT_THAT(err({"--out=x", "--hidden=abc"}), HasSubstr("--hidden"));
  EXPECT_THAT(err({"--out=x", "--dtype=f64"}), HasSubstr("--dtype"));
  EXPECT_THAT(err({"--out=x", "--bogus=1"}), HasSubstr("unknown option"));
  EXPECT_THAT(err({"--out=x", "--heads=8", "--kv-heads=3"}), HasSubstr("--kv-heads"));
  EXPECT_THAT(err({"--out=x", "--vocab=100"}), HasSubstr("--vocab"));
  for (const char* bad : {"--rope-scaling=yarn:4", "--rope-scaling=linear:0",
                          "--rope-scaling=linear", "--rope-scaling=llama3:-8",
                          "--rope-scaling=llama3:x"})
    EXPECT_THAT(err({"--out=x", bad}), HasSubstr("--rope-scaling")) << bad;
  const std::vector<std::string> help = {"--help"};
  const auto args = argv_of(help);
  auto h = parse_args(args);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->help);
}

} // namespace
} // namespace kvactor::model::tiny
