// A GGUF file's tokenizer against the same model's tokenizer.json: each real
// tokenizer.json (fetched by the ctest fixture model.tokenizer_files) is
// written as GGUF metadata as llama.cpp's converter writes it, read back with
// gguf_tokenizer_spec, and must tokenize every text of
// tools/tokenizer-reference/texts.json as Hugging Face's library does (the
// checked-in ids) and as kvactor's tokenizer.json path does, and decode alike.
//
//   llama2    "llama": scores, token types, <s> prepended
//   llama3_1  "gpt2", pre "llama-bpe"
//   qwen2_5   "gpt2", pre "qwen2"      qwen3  the same
//   mistral_nemo  "gpt2", pre "tekken"
//
// NOTE: llama2's scores are made from its merges' ranks (a merged piece
// scores minus the rank of its first merge), so that the merges
// gguf_tokenizer_spec derives from them must equal the file's, pair for pair.

#include "model/gguf/gguf_tokenizer.hpp"

#include <filesystem>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "base/json.hpp"
#include "tests/model/gguf/gguf_metadata.hpp"
#include "tests/model/tokenizer_reference_cases.hpp"

namespace kvactor::model {
namespace {

namespace fs = std::filesystem;
using ids = std::vector<token_id>;
using test_support::gguf_metadata;
using test_support::temp_dir;

struct family {
  std::string name;
  std::string pre; // empty: "llama" (SentencePiece)
};
void PrintTo(const family& f, std::ostream* os) { *os << f.name; }

result<tokenizer_spec> json_spec(const std::string& name) {
  const fs::path file = fs::path(KVACTOR_TOKENIZER_FILES_DIR) / name / "tokenizer.json";
  auto text = json::read_file(file);
  if (!text) return text.error();
  return parse_tokenizer_json(std::string_view(text->data(), text->size()), file.string());
}

bool is_byte_token(const std::string& s) {
  static const std::regex byte("<0x[0-9A-F]{2}>");
  return std::regex_match(s, byte);
}

// The metadata llama.cpp's converter writes for the tokenizer `spec`.
gguf_metadata gguf_of(const tokenizer_spec& spec, const family& f) {
  const bool spm = f.pre.empty();
  std::size_t n = 0;
  for (const auto& [s, id] : spec.vocab) n = std::max(n, static_cast<std::size_t>(id) + 1);
  for (const auto& a : spec.added_tokens) n = std::max(n, static_cast<std::size_t>(a.id) + 1);
  std::vector<std::string> tokens(n);
  std::vector<int32_t> types(n, 1);
  for (const auto& [s, id] : spec.vocab) {
    tokens[static_cast<std::size_t>(id)] = s;
    if (spm && is_byte_token(s)) types[static_cast<std::size_t>(id)] = 6;
  }
  for (const auto& a : spec.added_tokens) {
    tokens[static_cast<std::size_t>(a.id)] = a.content;
    types[static_cast<std::size_t>(a.id)] = !a.special                     ? 4
                                            : spec.bpe.unk_token == a.content ? 2
                                                                              : 3;
  }
  gguf_metadata m;
  m.set("tokenizer.ggml.model", gguf_encoded::string(spm ? "llama" : "gpt2"));
  m.set_strings("tokenizer.ggml.tokens", tokens);
  m.set_i32s("tokenizer.ggml.token_type", types);
  if (spm) {
    std::map<std::string, float> first_rank;
    for (std::size_t r = 0; r < spec.merges.size(); ++r)
      first_rank.emplace(spec.merges[r].first + spec.merges[r].second, -static_cast<float>(r));
    std::vector<float> scores(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i)
      if (auto it = first_rank.find(tokens[i]); it != first_rank.end()) scores[i] = it->second;
    m.set_f32s("tokenizer.ggml.scores", scores);
    if (spec.bpe.unk_token)
      for (std::size_t i = 0; i < n; ++i)
        if (tokens[i] == *spec.bpe.unk_token)
          m.set("tokenizer.ggml.unknown_token_id", gguf_encoded::u32(static_cast<uint32_t>(i)));
  } else {
    std::vector<std::string> merges;
    for (const auto& [a, b] : spec.merges) merges.push_back(std::string(a).append(" ").append(b));
    m.set_strings("tokenizer.ggml.merges", merges);
    m.set("tokenizer.ggml.pre", gguf_encoded::string(f.pre));
  }
  m.set("tokenizer.ggml.add_bos_token", gguf_encoded::boolean(!spec.prefix_ids.empty()));
  if (!spec.prefix_ids.empty())
    m.set("tokenizer.ggml.bos_token_id",
          gguf_encoded::u32(static_cast<uint32_t>(spec.prefix_ids.at(0))));
  return m;
}

std::string show(const ids& v) {
  std::string s = "[";
  for (auto id : v) {
    if (s.size() > 1) s += ',';
    s += std::to_string(id);
  }
  return s + "]";
}

class gguf_tokenizer_reference : public ::testing::TestWithParam<family> {};

TEST_P(gguf_tokenizer_reference, tokenizes_as_the_tokenizer_json) {
  const family& f = GetParam();
  auto from_json = json_spec(f.name);
  ASSERT_TRUE(from_json) << from_json.error().message
                         << " (the fixture model.tokenizer_files fetches it: "
                            "tools/tokenizer-reference/fetch.sh)";
  temp_dir dir;
  auto file = gguf_of(*from_json, f).open(dir);
  ASSERT_TRUE(file) << file.error().message;
  auto from_gguf = gguf_tokenizer_spec(*file);
  ASSERT_TRUE(from_gguf) << from_gguf.error().message;

  // The same merges, in the same order, and the same pre-tokenizer.
  ASSERT_EQ(from_gguf->merges.size(), from_json->merges.size());
  for (std::size_t r = 0; r < from_json->merges.size(); ++r)
    ASSERT_EQ(from_gguf->merges[r], from_json->merges[r]) << "merge " << r;
  EXPECT_EQ(from_gguf->splits.size(), from_json->splits.size());
  for (std::size_t i = 0; i < from_json->splits.size() && i < from_gguf->splits.size(); ++i) {
    const auto& want = from_json->splits[i];
    const auto& got = from_gguf->splits[i];
    ASSERT_EQ(got.index(), want.index()) << "split " << i;
    if (const auto* p = std::get_if<split_pattern>(&want))
      EXPECT_EQ(std::get<split_pattern>(got), *p)
        << "the file's Split regex is the pattern tokenizer.ggml.pre names";
    else
      EXPECT_EQ(std::get<regex_split>(got).pattern(), std::get<regex_split>(want).pattern())
        << "the file's Split regex is the one tokenizer.ggml.pre names";
  }
  EXPECT_EQ(from_gguf->bpe.ignore_merges, from_json->bpe.ignore_merges);
  EXPECT_EQ(from_gguf->normalizer.size(), from_json->normalizer.size());
  EXPECT_EQ(from_gguf->prefix_ids, from_json->prefix_ids);
  EXPECT_EQ(from_gguf->suffix_ids, from_json->suffix_ids);

  auto g = tokenizer::build(std::move(*from_gguf), "gguf");
  ASSERT_TRUE(g) << g.error().message;
  auto j = tokenizer::build(std::move(*from_json), "json");
  ASSERT_TRUE(j) << j.error().message;
  const auto cases = test_support::read_cases(fs::path(KVACTOR_TOKENIZER_REFERENCE_DIR) /
                                              (f.name + ".json"));
  ASSERT_GT(cases.size(), 100u);
  int wrong = 0;
  for (const auto& c : cases) {
    const ids with = g->encode(c.text, true), without = g->encode(c.text, false);
    const bool same = with == c.with_special && without == c.without_special &&
                      with == j->encode(c.text, true) && without == j->encode(c.text, false) &&
                      g->decode(without) == c.decoded &&
                      g->decode(with, /*skip_special=*/true) == c.decoded_skip_special;
    if (same) continue;
    if (++wrong <= 5)
      ADD_FAILURE() << f.name << ": " << json::quote(c.text) << "\n  expected "
                    << show(c.with_special) << "\n  got      " << show(with) << "\n  decoded "
                    << json::quote(g->decode(without)) << ", expected " << json::quote(c.decoded);
  }
  EXPECT_EQ(wrong, 0) << "of " << cases.size() << " texts";
}

INSTANTIATE_TEST_SUITE_P(families, gguf_tokenizer_reference,
                         ::testing::Values(family{"llama2", ""}, family{"llama3_1", "llama-bpe"},
                                           family{"qwen2_5", "qwen2"}, family{"qwen3", "qwen2"},
                                           family{"mistral_nemo", "tekken"}),
                         [](const auto& param) { return param.param.name; });

} // namespace
} // namespace kvactor::model
