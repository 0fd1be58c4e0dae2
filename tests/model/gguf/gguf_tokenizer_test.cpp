// gguf_tokenizer_spec on small hand-made vocabularies: a SentencePiece-style
// one ("llama") and a byte-level one ("gpt2"), and each refusal. The same
// model's tokenizer.json and GGUF file are compared in
// gguf_tokenizer_reference_test.cpp.

#include "model/gguf/gguf_tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model_folder.hpp"
#include "model/tokenizer/pretokenizer.hpp"
#include "tests/model/gguf/gguf_metadata.hpp"
#include "tests/model/tokenizer_fixture.hpp"

namespace kvactor::model {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ids = std::vector<token_id>;
using test_support::gguf_metadata;
using test_support::temp_dir;

// SentencePiece-style: <unk> <s> </s>, the 256 byte tokens (3..258), single
// characters (259..264), six pieces scored in merge order, one user-defined.
constexpr token_id spm_bytes = 3, spm_sp = 259, spm_he = 267, spm_ll = 266, spm_hello = 270,
                   spm_tool = 271;
gguf_metadata spm_vocabulary() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  std::vector<float> scores = {0, 0, 0};
  auto add = [&](std::string token, int32_t type, float score) {
    tokens.push_back(std::move(token));
    types.push_back(type);
    scores.push_back(score);
  };
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 6, 0);
  }
  for (const char* c : {"\u2581", "h", "e", "l", "o", "w"}) add(c, 1, -100);
  float score = -1;
  for (const char* m : {"\u2581h", "ll", "\u2581he", "llo", "\u2581w", "\u2581hello"})
    add(m, 1, score--);
  add("<|tool|>", 4, 0);
  gguf_metadata m;
  m.set("tokenizer.ggml.model", gguf_encoded::string("llama"));
  m.set_strings("tokenizer.ggml.tokens", tokens);
  m.set_i32s("tokenizer.ggml.token_type", types);
  m.set_f32s("tokenizer.ggml.scores", scores);
  m.set("tokenizer.ggml.bos_token_id", gguf_encoded::u32(1));
  m.set("tokenizer.ggml.eos_token_id", gguf_encoded::u32(2));
  m.set("tokenizer.ggml.unknown_token_id", gguf_encoded::u32(0));
  return m;
}

// Byte-level: tokenizer_fixture.hpp's vocabulary and <|endoftext|>, by id.
std::vector<std::string> byte_level_tokens() {
  const auto spec = test_support::hand_built_spec();
  std::vector<std::string> tokens(spec.vocab.size() + 1);
  for (const auto& [s, id] : spec.vocab) tokens[static_cast<std::size_t>(id)] = s;
  tokens[test_support::id_eot] = "<|endoftext|>";
  return tokens;
}

// The same with the fixture's merges.
gguf_metadata byte_level_vocabulary() {
  const std::vector<std::string> tokens = byte_level_tokens();
  std::vector<std::string> merges;
  std::vector<int32_t> types(tokens.size(), 1);
  types[test_support::id_eot] = 3;
  for (const auto& [a, b] : test_support::hand_built_spec().merges) merges.push_back(a + " " + b);
  gguf_metadata m;
  m.set("tokenizer.ggml.model", gguf_encoded::string("gpt2"));
  m.set("tokenizer.ggml.pre", gguf_encoded::string("llama-bpe"));
  m.set_strings("tokenizer.ggml.tokens", tokens);
  m.set_i32s("tokenizer.ggml.token_type", types);
  m.set_strings("tokenizer.ggml.merges", merges);
  m.set("tokenizer.ggml.bos_token_id", gguf_encoded::u32(test_support::id_eot));
  m.set("tokenizer.ggml.eos_token_id", gguf_encoded::u32(test_support::id_eot));
  return m;
}

result<tokenizer_spec> spec_of(const temp_dir& dir, const gguf_metadata& m) {
  auto f = m.open(dir);
  if (!f) return f.error();
  return gguf_tokenizer_spec(*f);
}

tokenizer tokenizer_of(const temp_dir& dir, const gguf_metadata& m) {
  auto f = m.open(dir);
  EXPECT_TRUE(f) << f.error().message;
  auto t = gguf_tokenizer(*f);
  EXPECT_TRUE(t) << t.error().message;
  return std::move(*t);
}

TEST(gguf_tokenizer, sentencepiece_maps_as_llama2_tokenizer_json) {
  temp_dir dir;
  auto spec = spec_of(dir, spm_vocabulary());
  ASSERT_TRUE(spec) << spec.error().message;
  using merges = std::vector<std::pair<std::string, std::string>>;
  // "▁hello" has one split into pieces ("▁he" "llo"), "▁he" one ("▁h" "e").
  EXPECT_EQ(spec->merges, (merges{{"\u2581", "h"},
                                  {"l", "l"},
                                  {"\u2581h", "e"},
                                  {"ll", "o"},
                                  {"\u2581", "w"},
                                  {"\u2581he", "llo"}}))
    << "ranked by the merged piece's score";
  EXPECT_FALSE(spec->bpe.byte_level);
  EXPECT_TRUE(spec->bpe.byte_fallback);
  EXPECT_TRUE(spec->bpe.fuse_unk);
  EXPECT_EQ(spec->bpe.unk_token, "<unk>");
  ASSERT_EQ(spec->normalizer.size(), 2u);
  EXPECT_EQ(spec->normalizer[0].what, normalizer_step::kind::prepend);
  EXPECT_EQ(spec->normalizer[1].what, normalizer_step::kind::replace);
  EXPECT_FALSE(spec->metaspace_split);
  EXPECT_TRUE(spec->splits.empty());
  ASSERT_EQ(spec->decoder.size(), 4u);
  EXPECT_EQ(spec->decoder[3].what, decoder_step::kind::strip);
  EXPECT_EQ(spec->prefix_ids, ids{1}); // add_bos_token defaults to true
  EXPECT_TRUE(spec->suffix_ids.empty());
  ASSERT_EQ(spec->added_tokens.size(), 4u);
  EXPECT_TRUE(spec->added_tokens[0].special); // <unk>
  EXPECT_TRUE(spec->added_tokens[2].special); // </s>
  EXPECT_EQ(spec->added_tokens[3].content, "<|tool|>");
  EXPECT_FALSE(spec->added_tokens[3].special); // user-defined
}

TEST(gguf_tokenizer, sentencepiece_encodes_and_decodes) {
  temp_dir dir;
  gguf_metadata m = spm_vocabulary();
  m.set("tokenizer.ggml.add_eos_token", gguf_encoded::boolean(true));
  const tokenizer t = tokenizer_of(dir, m);
  EXPECT_EQ(t.encode("hello", true), (ids{1, spm_hello, 2}));
  EXPECT_EQ(t.encode("hello hello"), (ids{spm_hello, spm_hello}));
  // 'ö' is no piece: its bytes' tokens.
  EXPECT_EQ(t.encode("hellö"), (ids{spm_he, spm_ll, spm_bytes + 0xC3, spm_bytes + 0xB6}));
  // A user-defined token is matched first; the text after it gets its own '▁'.
  EXPECT_EQ(t.encode("hello<|tool|>hello"), (ids{spm_hello, spm_tool, spm_hello}));
  EXPECT_EQ(t.encode(" "), (ids{spm_sp, spm_sp}));
  EXPECT_EQ(t.decode(t.encode("hellö hello")), "hellö hello");
  EXPECT_EQ(t.decode(t.encode("hello<|tool|>", true), /*skip_special=*/true), "hello<|tool|>");
  EXPECT_TRUE(t.is_special(1));
  EXPECT_FALSE(t.is_special(spm_tool));
}

TEST(gguf_tokenizer, sentencepiece_without_space_prefix_or_bos) {
  temp_dir dir;
  gguf_metadata m = spm_vocabulary();
  m.set("tokenizer.ggml.add_space_prefix", gguf_encoded::boolean(false));
  m.set("tokenizer.ggml.add_bos_token", gguf_encoded::boolean(false));
  const tokenizer t = tokenizer_of(dir, m);
  EXPECT_EQ(t.encode(" hello", true), (ids{spm_hello}));
  EXPECT_EQ(t.decode(ids{spm_hello}), " hello");
}

TEST(gguf_tokenizer, byte_level_by_pre_tokenizer) {
  temp_dir dir;
  gguf_metadata m = byte_level_vocabulary();
  auto spec = spec_of(dir, m);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_TRUE(spec->bpe.byte_level);
  EXPECT_TRUE(spec->bpe.ignore_merges); // Llama 3's
  EXPECT_EQ(spec->splits.size(), 1u);
  EXPECT_EQ(std::get<split_pattern>(spec->splits[0]), split_pattern::llama3);
  // Without add_bos_token, BOS as Llama 3's tokenizer.json prepends it.
  EXPECT_EQ(spec->prefix_ids, (std::vector<token_id>{test_support::id_eot}));
  EXPECT_TRUE(spec->decoder.empty());    // ByteLevel
  EXPECT_TRUE(spec->normalizer.empty());
  const struct {
    const char* pre;
    split_pattern p;
    bool nfc;
  } cases[] = {{"llama3", split_pattern::llama3, false},
               {"llama-v3", split_pattern::llama3, false},
               {"falcon3", split_pattern::llama3, false},
               {"qwen2", split_pattern::qwen2, true},
               {"deepseek-r1-qwen", split_pattern::qwen2, false},
               {"gpt-2", split_pattern::gpt2, false},
               {"default", split_pattern::gpt2, false}};
  for (const auto& c : cases) {
    m.set("tokenizer.ggml.pre", gguf_encoded::string(c.pre));
    auto s = spec_of(dir, m);
    ASSERT_TRUE(s) << c.pre << ": " << s.error().message;
    EXPECT_EQ(s->splits.size(), 1u) << c.pre;
    EXPECT_EQ(std::get<split_pattern>(s->splits.at(0)), c.p) << c.pre;
    EXPECT_EQ(s->normalizer.size(), c.nfc ? 1u : 0u) << c.pre;
    EXPECT_EQ(s->bpe.ignore_merges, c.p == split_pattern::llama3) << c.pre;
    EXPECT_EQ(s->prefix_ids.size(), c.p == split_pattern::llama3 ? 1u : 0u) << c.pre;
  }
  m.set("tokenizer.ggml.add_bos_token", gguf_encoded::boolean(false)); // the key decides
  m.set("tokenizer.ggml.pre", gguf_encoded::string("llama-bpe"));
  auto no_bos = spec_of(dir, m);
  ASSERT_TRUE(no_bos) << no_bos.error().message;
  EXPECT_TRUE(no_bos->prefix_ids.empty());
  m.erase("tokenizer.ggml.add_bos_token");
  m.erase("tokenizer.ggml.pre"); // older files: "default"
  auto s = spec_of(dir, m);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(std::get<split_pattern>(s->splits.at(0)), split_pattern::gpt2);
}

// The pieces each split of `spec` in turn makes of `text`.
std::vector<std::string> pieces(const tokenizer_spec& spec, std::string_view text) {
  std::vector<std::string> out{std::string(text)};
  for (const auto& step : spec.splits) {
    std::vector<std::string> next;
    for (const std::string& p : out) {
      const auto parts = std::holds_alternative<split_pattern>(step)
                           ? pre_split(p, std::get<split_pattern>(step))
                           : std::get<regex_split>(step).split(p);
      next.insert(next.end(), parts.begin(), parts.end());
    }
    out = std::move(next);
  }
  return out;
}

// SmolLM's split (each digit alone, then GPT-2's) and Mistral Nemo's Tekken
// regex (case runs apart, each digit alone), beside GPT-2's own.
TEST(gguf_tokenizer, byte_level_splits_of_smollm_and_tekken) {
  temp_dir dir;
  gguf_metadata m = byte_level_vocabulary();
  using v = std::vector<std::string>;
  const struct {
    const char* pre;
    v want;
  } cases[] = {{"gpt-2", v{"HelloWorld", " 123", "'s"}},
               {"smollm", v{"HelloWorld", " ", "1", "2", "3", "'s"}},
               {"tekken", v{"Hello", "World", " ", "1", "2", "3", "'s"}}};
  for (const auto& c : cases) {
    m.set("tokenizer.ggml.pre", gguf_encoded::string(c.pre));
    auto s = spec_of(dir, m);
    ASSERT_TRUE(s) << c.pre << ": " << s.error().message;
    EXPECT_EQ(pieces(*s, "HelloWorld 123's"), c.want) << c.pre;
    EXPECT_EQ(s->bpe.ignore_merges, std::string_view(c.pre) == "tekken") << c.pre;
    EXPECT_EQ(s->prefix_ids.size(), std::string_view(c.pre) == "tekken" ? 1u : 0u) << c.pre;
  }
}

TEST(gguf_tokenizer, byte_level_encodes_and_decodes) {
  temp_dir dir;
  gguf_metadata m = byte_level_vocabulary();
  m.set("tokenizer.ggml.add_bos_token", gguf_encoded::boolean(true));
  const tokenizer t = tokenizer_of(dir, m);
  using namespace test_support;
  EXPECT_EQ(t.encode("hello world", true), (ids{id_eot, id_hello, id_sp_world}));
  EXPECT_EQ(t.encode("<|endoftext|>hello"), (ids{id_eot, id_hello}));
  EXPECT_TRUE(t.is_special(id_eot));
  EXPECT_EQ(t.decode(t.encode("hello world!\n")), "hello world!\n");
}

TEST(gguf_tokenizer, chat_template_when_present) {
  temp_dir dir;
  gguf_metadata m = byte_level_vocabulary();
  auto none = m.open(dir);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(gguf_chat_template(*none).value(), std::nullopt);
  m.set("tokenizer.chat_template", gguf_encoded::string("{{ messages }}"));
  auto f = m.open(dir);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(gguf_chat_template(*f).value(), "{{ messages }}");
}

TEST(gguf_tokenizer, the_files_chat_template_or_the_one_given_instead_reads_its_special_tokens) {
  temp_dir dir;
  gguf_metadata m = spm_vocabulary();
  m.set("tokenizer.chat_template",
        gguf_encoded::string("{{ bos_token }}{{ messages[0].content }}"));
  ASSERT_TRUE(m.open(dir));
  const auto file = dir.path() / "m.gguf";
  const std::vector<chat_message> hi = {{"user", "hi"}};
  auto own = load_model_chat_template(file);
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_EQ(own->render(hi).value(), "<s>hi");

  // A template the file's Jinja cannot compile: the model is refused, or
  // served with the one given instead.
  m.set("tokenizer.chat_template", gguf_encoded::string("{% if %}"));
  ASSERT_TRUE(m.open(dir));
  auto broken = load_model_chat_template(file);
  ASSERT_FALSE(broken);
  EXPECT_THAT(broken.error().message, AllOf(HasSubstr(file.string()), HasSubstr("line 1")));
  std::ofstream(dir.path() / "given.jinja") << "[{{ messages[0].content }}]{{ eos_token }}";
  auto given = load_model_chat_template(file, dir.path() / "given.jinja");
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->render(hi).value(), "[hi]</s>");
  auto missing = load_model_chat_template(file, dir.path() / "missing.jinja");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("missing.jinja: no such file"));
  // Or a file whose template is not even a string.
  m.set("tokenizer.chat_template", gguf_encoded::u32(7));
  ASSERT_TRUE(m.open(dir));
  ASSERT_FALSE(load_model_chat_template(file));
  auto over_a_number = load_model_chat_template(file, dir.path() / "given.jinja");
  ASSERT_TRUE(over_a_number) << over_a_number.error().message;
  EXPECT_EQ(over_a_number->render(hi).value(), "[hi]</s>");
}

// Each change to a valid file, and what its error names.
struct refusal {
  const char* what;
  std::function<void(gguf_metadata&)> change;
  const char* key;
  const char* says;
};

void expect_refusals(const gguf_metadata& valid, const std::vector<refusal>& refusals) {
  temp_dir dir;
  for (const auto& r : refusals) {
    gguf_metadata m = valid;
    r.change(m);
    auto spec = spec_of(dir, m);
    ASSERT_FALSE(spec) << r.what << ": accepted";
    EXPECT_THAT(spec.error().message,
                AllOf(HasSubstr((dir / "m.gguf").string()), HasSubstr(r.key), HasSubstr(r.says)))
      << r.what;
  }
}

TEST(gguf_tokenizer, refuses_what_it_cannot_read) {
  const auto set_string = [](const char* key, const char* v) {
    return [=](gguf_metadata& m) { m.set(key, gguf_encoded::string(v)); };
  };
  const auto drop = [](const char* key) { return [=](gguf_metadata& m) { m.erase(key); }; };
  const auto set_u32 = [](const char* key, uint32_t v) {
    return [=](gguf_metadata& m) { m.set(key, gguf_encoded::u32(v)); };
  };
  const std::vector<refusal> both = {
    {"bert", set_string("tokenizer.ggml.model", "bert"), "tokenizer.ggml.model", "'bert'"},
    {"t5", set_string("tokenizer.ggml.model", "t5"), "tokenizer.ggml.model", "'t5'"},
    {"rwkv", set_string("tokenizer.ggml.model", "rwkv"), "tokenizer.ggml.model", "'rwkv'"},
    {"no model", drop("tokenizer.ggml.model"), "tokenizer.ggml.model", "missing"},
    {"no tokens", drop("tokenizer.ggml.tokens"), "tokenizer.ggml.tokens", "missing"},
    {"no types", drop("tokenizer.ggml.token_type"), "tokenizer.ggml.token_type", "missing"},
    {"short types",
     [](gguf_metadata& m) { m.set_i32s("tokenizer.ggml.token_type", std::vector<int32_t>(5, 1)); },
     "tokenizer.ggml.token_type", "5 types"},
    {"bos out of range", set_u32("tokenizer.ggml.bos_token_id", 100000),
     "tokenizer.ggml.bos_token_id", "100000"},
    {"eos out of range", set_u32("tokenizer.ggml.eos_token_id", 100000),
     "tokenizer.ggml.eos_token_id", "outside"},
    {"unknown out of range", set_u32("tokenizer.ggml.unknown_token_id", 100000),
     "tokenizer.ggml.unknown_token_id", "outside"},
    {"padding out of range", set_u32("tokenizer.ggml.padding_token_id", 100000),
     "tokenizer.ggml.padding_token_id", "outside"},
    {"negative bos", [](gguf_metadata& m) {
       m.set("tokenizer.ggml.bos_token_id", gguf_encoded::i32(-1));
     }, "tokenizer.ggml.bos_token_id", ""},
    {"bos asked for, none given",
     [](gguf_metadata& m) {
       m.erase("tokenizer.ggml.bos_token_id");
       m.set("tokenizer.ggml.add_bos_token", gguf_encoded::boolean(true));
     },
     "tokenizer.ggml.bos_token_id", "add_bos_token"},
    {"add_bos not a bool", set_u32("tokenizer.ggml.add_bos_token", 1),
     "tokenizer.ggml.add_bos_token", "expected"},
  };
  expect_refusals(spm_vocabulary(), both);
  expect_refusals(byte_level_vocabulary(), both);

  expect_refusals(
    spm_vocabulary(),
    {{"no scores", drop("tokenizer.ggml.scores"), "tokenizer.ggml.scores", "missing"},
     {"short scores",
      [](gguf_metadata& m) { m.set_f32s("tokenizer.ggml.scores", std::vector<float>(7, 0.0f)); },
      "tokenizer.ggml.scores", "7 scores"},
     {"NaN score",
      [](gguf_metadata& m) {
        std::vector<float> s(272, 0.0f);
        s[9] = std::nanf("");
        m.set_f32s("tokenizer.ggml.scores", s);
      },
      "tokenizer.ggml.scores", "token 9"},
     {"type 7",
      [](gguf_metadata& m) {
        std::vector<int32_t> t(272, 1);
        t[4] = 7;
        m.set_i32s("tokenizer.ggml.token_type", t);
      },
      "tokenizer.ggml.token_type", "type 7"},
     {"byte type misspelt",
      [](gguf_metadata& m) {
        std::vector<int32_t> t(272, 1);
        t[1] = 6;
        m.set_i32s("tokenizer.ggml.token_type", t);
      },
      "tokenizer.ggml.token_type", "'<s>'"},
     {"duplicate token",
      [](gguf_metadata& m) {
        std::vector<std::string> t(272);
        for (std::size_t i = 0; i < t.size(); ++i)
          t[i] = std::string("t").append(std::to_string(i));
        t[9] = "t3";
        m.set_strings("tokenizer.ggml.tokens", t);
      },
      "tokenizer.ggml.tokens", "appears twice"}});

  expect_refusals(
    byte_level_vocabulary(),
    {{"no merges", drop("tokenizer.ggml.merges"), "tokenizer.ggml.merges", "missing"},
     {"merge of an unknown token",
      [](gguf_metadata& m) {
        m.set_strings("tokenizer.ggml.merges", {"h e", "\u4e16 x"});
      },
      "tokenizer.ggml.merges", "merge 1"},
     {"merge result not a token",
      [](gguf_metadata& m) { m.set_strings("tokenizer.ggml.merges", {"x y"}); },
      "tokenizer.ggml.merges", "'xy'"},
     {"merge without a space",
      [](gguf_metadata& m) { m.set_strings("tokenizer.ggml.merges", {"he"}); },
      "tokenizer.ggml.merges", "one space"},
     {"a byte without its token",
      [](gguf_metadata& m) {
        std::vector<std::string> t = byte_level_tokens();
        std::replace(t.begin(), t.end(), std::string("\u0120"), std::string("space"));
        m.set_strings("tokenizer.ggml.tokens", t);
      },
      "tokenizer.ggml.tokens", "no token for byte 0x20 ('\u0120')"},
     {"unknown pre-tokenizer", set_string("tokenizer.ggml.pre", "deepseek-llm"),
      "tokenizer.ggml.pre", "'deepseek-llm'"},
     {"pre not a string", set_u32("tokenizer.ggml.pre", 3), "tokenizer.ggml.pre", "expected"}});
}

} // namespace
} // namespace kvactor::model
