#include "actors/core/request_blocks.hpp"

#include <gtest/gtest.h>

namespace kvactor {
namespace {

// A sequence writes its prompt and its output short of the last token.
TEST(request_blocks, one_choice_needs_its_prompt_and_output) {
  EXPECT_EQ(num_request_blocks(40, 4, 1, 4), 11); // 43 tokens
  EXPECT_EQ(num_request_blocks(13, 4, 1, 4), 4);  // 16 tokens: exactly 4 blocks
  EXPECT_EQ(num_request_blocks(14, 4, 1, 4), 5);
  EXPECT_EQ(num_request_blocks(1, 1, 1, 16), 1);
}

// 10 prompt tokens at 4 a block: the fork comes after 9, blocks 0 and 1 are
// shared, and each choice holds its copy of block 2 and its output's blocks
// (scheduler_fork.computes_the_prompt_once_and_copies_only_the_partial_block
// holds 5 blocks for 3 choices of 3 tokens).
TEST(request_blocks, choices_share_the_full_blocks_before_the_last_prompt_token) {
  EXPECT_EQ(num_request_blocks(10, 3, 3, 4), 2 + 3 * 1); // 2 + 2 tokens each
  EXPECT_EQ(num_request_blocks(10, 4, 3, 4), 2 + 3 * 2); // 2 + 3
  EXPECT_EQ(num_request_blocks(8, 4, 2, 4), 1 + 2 * 2);  // block 1 is written after the fork
  EXPECT_EQ(num_request_blocks(1, 7, 4, 4), 0 + 4 * 2);  // nothing to share
  EXPECT_EQ(num_request_blocks(2000, 1, 8, 8), 249 + 8); // docs/serving.md's example: 257
}

// Issue 28's request: 128 choices of 1,500 tokens, far beyond a 16k-token
// cache (1,024 blocks of 16), though one choice alone fits.
TEST(request_blocks, counts_every_choice_output) {
  EXPECT_EQ(num_request_blocks(100, 1500, 128, 16), 6 + 128 * 94);
  EXPECT_LE(num_request_blocks(100, 1500, 1, 16), 1024);
}

} // namespace
} // namespace kvactor
