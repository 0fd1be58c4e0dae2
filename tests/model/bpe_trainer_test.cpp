#include "model/tiny/bpe_trainer.hpp"

#include <gtest/gtest.h>

#include "model/tokenizer/tokenizer.hpp"

namespace kvactor::model::tiny {
namespace {

using merges = std::vector<std::pair<std::string, std::string>>;

TEST(bpe_trainer, learns_the_most_frequent_pairs_first) {
  // Pieces: "ab", " ab", " ab", " abc". Pair counts: (a,b) 4, (Ġ,a) 3, (b,c) 1.
  // Merge a+b; then (Ġ,ab) 3, (ab,c) 1: merge Ġ+ab; then only pairs seen once.
  const auto spec = train_bpe("ab ab ab abc", split_pattern::llama3, 100);
  EXPECT_EQ(spec.merges, (merges{{"a", "b"}, {"\u0120", "ab"}}));
  ASSERT_EQ(spec.vocab.size(), 258u);
  EXPECT_EQ(spec.vocab[256], (std::pair<std::string, token_id>{"ab", 256}));
  EXPECT_EQ(spec.vocab[257], (std::pair<std::string, token_id>{"\u0120ab", 257}));
}

TEST(bpe_trainer, stops_at_the_token_budget_and_builds_a_working_tokenizer) {
  const std::string text = "the cat sat on the mat, the cat sat on the hat. the end.";
  const auto spec = train_bpe(text, split_pattern::llama3, 5);
  EXPECT_EQ(spec.vocab.size(), 261u);
  auto tok = tokenizer::build(spec, "trained");
  ASSERT_TRUE(tok) << tok.error().message;
  const auto ids = tok->encode(text);
  EXPECT_LT(ids.size(), text.size());
  EXPECT_EQ(tok->decode(ids), text);
}

} // namespace
} // namespace kvactor::model::tiny
