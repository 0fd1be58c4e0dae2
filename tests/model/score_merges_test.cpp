// merges_from_scores: every split of a piece into two pieces, ranked by the
// merged piece's score, ties in the order Hugging Face's converter keeps.

#include "model/tokenizer/score_merges.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using merges = std::vector<std::pair<std::string, std::string>>;

TEST(score_merges, ranks_by_the_merged_piece_score) {
  // "ab" scores below "bc", though its id is lower.
  EXPECT_EQ(merges_from_scores({"a", "b", "c", "ab", "bc"}, {0, 0, 0, -2, -1}),
            (merges{{"b", "c"}, {"a", "b"}}));
}

TEST(score_merges, ties_by_merged_id_then_left_then_right_id) {
  // "bc" (id 3) and "ab" (id 4) tie: the lower merged id first. "abc" has
  // two splits: by the left part's id, "a" (0) before "ab" (4).
  EXPECT_EQ(merges_from_scores({"a", "b", "c", "bc", "ab", "abc"}, {0, 0, 0, -1, -1, -2}),
            (merges{{"b", "c"}, {"a", "b"}, {"a", "bc"}, {"ab", "c"}}));
  // Equal scores everywhere: piece by piece in id order.
  EXPECT_EQ(merges_from_scores({"abc", "a", "b", "c", "bc", "ab"}, {0, 0, 0, 0, 0, 0}),
            (merges{{"a", "bc"}, {"ab", "c"}, {"b", "c"}, {"a", "b"}}));
}

TEST(score_merges, splits_between_characters_only) {
  // "▁▁" is three bytes twice; "é" is no split of "\xc3" and "\xa9".
  EXPECT_EQ(merges_from_scores({"\u2581", "\u2581\u2581", "\xc3", "\xa9", "\u00e9", "x\xff"},
                               {0, -1, 0, 0, 0, -2}),
            (merges{{"\u2581", "\u2581"}}));
  // An invalid byte is a character of its own.
  EXPECT_EQ(merges_from_scores({"x", "\xff", "x\xff"}, {0, 0, -1}), (merges{{"x", "\xff"}}));
}

TEST(score_merges, pieces_without_a_split_give_none) {
  EXPECT_TRUE(merges_from_scores({"a", "b", "<s>", "ba"}, {0, 0, 0, -1}).size() == 1);
  EXPECT_TRUE(merges_from_scores({}, {}).empty());
}

} // namespace
} // namespace kvactor::model
