// batching_policy's rules on their own: what each comparison mode admits,
// when a batch opens, which ends pad, what a contiguous reservation holds,
// and that continuous batching over paged blocks passes every rule.

#include "actors/core/batching_policy.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kvactor {
namespace {

constexpr int32_t block_size = 16;

scheduler_config config_of(batching_mode batching, kv_reservation reservation,
                           int32_t max_num_seqs = 4, int32_t max_model_len = 128) {
  scheduler_config c;
  c.batching = batching;
  c.reservation = reservation;
  c.max_num_seqs = max_num_seqs;
  c.max_model_len = max_model_len;
  return c;
}

sequence seq_of(seq_id id, int32_t num_tokens) {
  return sequence(id, std::vector<token_id>(size_t(num_tokens), 7));
}

generation_params params_of(int32_t max_tokens) {
  generation_params p;
  p.max_tokens = max_tokens;
  return p;
}

TEST(batching_policy, continuous_paged_batching_passes_every_rule) {
  batching_policy policy(config_of(batching_mode::continuous, kv_reservation::paged), 8,
                         block_size);
  EXPECT_TRUE(policy.continuous());
  EXPECT_FALSE(policy.opens_batch());
  EXPECT_FALSE(policy.between_batches());
  batching_policy::row r;
  int32_t reserving = 0;
  // Far more than the pool holds: paging admits it; the ledger decides.
  EXPECT_TRUE(policy.admissible(r, seq_of(1, 500), params_of(500), reserving));
  EXPECT_EQ(reserving, 0);
  policy.granted(r, seq_of(1, 500), params_of(500));
  EXPECT_EQ(policy.num_reserved_blocks(), 0);
  EXPECT_FALSE(policy.pads(r, finish_reason::eos));
  EXPECT_FALSE(r.padding());
}

TEST(batching_policy, counts_a_requests_blocks_with_its_choices_sharing_the_prompt) {
  batching_policy policy(config_of(batching_mode::continuous, kv_reservation::paged), 64,
                         block_size);
  // 40 prompt tokens + 10: 4 blocks for one choice.
  EXPECT_EQ(policy.blocks_needed(seq_of(1, 40), params_of(10)), 4);
  EXPECT_EQ(policy.request_blocks_needed(seq_of(1, 40), params_of(10), 1), 4);
  // Three choices share the prompt's 2 full blocks; each needs 2 of its own.
  EXPECT_EQ(policy.request_blocks_needed(seq_of(1, 40), params_of(10), 3), 2 + 3 * 2);
  EXPECT_EQ(policy.what_is_needed(seq_of(1, 40), params_of(10), 1),
            "40 prompt tokens + 10 max tokens");
  EXPECT_EQ(policy.what_is_needed(seq_of(1, 40), params_of(10), 3),
            "3 choices of 40 prompt tokens + 10 max tokens, sharing the prompt's 2 full blocks");
}

TEST(batching_policy, fixed_batching_admits_only_the_open_batch) {
  batching_policy policy(config_of(batching_mode::fixed, kv_reservation::paged, 2), 64,
                         block_size);
  EXPECT_FALSE(policy.continuous());
  std::vector<batching_policy::row> rows(3);
  int32_t reserving = 0;
  EXPECT_FALSE(policy.admissible(rows[0], seq_of(1, 8), params_of(8), reserving));
  ASSERT_TRUE(policy.opens_batch());
  std::vector<batching_policy::row*> order{&rows[0], &rows[1], &rows[2]};
  policy.open_batch(order); // at most max_num_seqs join
  EXPECT_TRUE(rows[0].in_batch);
  EXPECT_TRUE(rows[1].in_batch);
  EXPECT_FALSE(rows[2].in_batch);
  EXPECT_FALSE(policy.opens_batch());
  EXPECT_TRUE(policy.admissible(rows[0], seq_of(1, 8), params_of(8), reserving));
  EXPECT_FALSE(policy.admissible(rows[2], seq_of(3, 8), params_of(8), reserving));
  // Fixed batching never pads: the batch ends when its rows have left.
  EXPECT_FALSE(policy.pads(rows[0], finish_reason::eos));
  policy.left(rows[0]);
  EXPECT_FALSE(policy.opens_batch());
  policy.left(rows[1]);
  EXPECT_TRUE(policy.opens_batch());
  EXPECT_TRUE(policy.between_batches());
}

TEST(batching_policy, padded_batching_pads_every_end_but_the_batchs_last) {
  batching_policy policy(config_of(batching_mode::padded, kv_reservation::paged, 3), 64,
                         block_size);
  std::vector<batching_policy::row> rows(3);
  std::vector<batching_policy::row*> order{&rows[0], &rows[1], &rows[2]};
  policy.open_batch(order);
  EXPECT_TRUE(policy.pads(rows[0], finish_reason::eos));
  EXPECT_EQ(rows[0].padded_end, finish_reason::eos);
  EXPECT_TRUE(policy.pads(rows[1], finish_reason::max_tokens));
  EXPECT_EQ(policy.num_padding_rows(), 2);
  EXPECT_FALSE(policy.between_batches()); // row 2 still runs
  EXPECT_FALSE(policy.pads(rows[2], finish_reason::eos)); // the last live row ends for real
  policy.left(rows[2]);
  EXPECT_TRUE(policy.between_batches()); // padding rows alone
  EXPECT_FALSE(policy.opens_batch());    // until they leave
  policy.left(rows[0]);
  policy.left(rows[1]);
  EXPECT_EQ(policy.num_padding_rows(), 0);
  EXPECT_TRUE(policy.opens_batch());
}

TEST(batching_policy, contiguous_reservation_holds_max_model_len_per_sequence) {
  // 128 tokens of max_model_len: 8 blocks each; a pool of 20 holds two.
  batching_policy policy(config_of(batching_mode::continuous, kv_reservation::contiguous, 4,
                                   128),
                         20, block_size);
  EXPECT_FALSE(policy.continuous());
  EXPECT_EQ(policy.blocks_needed(seq_of(1, 10), params_of(10)), 8);
  EXPECT_EQ(policy.blocks_needed(seq_of(1, 100), params_of(100)), 13); // beyond max_model_len
  EXPECT_EQ(policy.request_blocks_needed(seq_of(1, 10), params_of(10), 1), 8);
  EXPECT_EQ(policy.what_is_needed(seq_of(1, 10), params_of(10), 1),
            "a contiguous reservation of max_model_len 128 tokens");
  std::vector<batching_policy::row> rows(3);
  int32_t reserving = policy.num_reserved_blocks();
  EXPECT_TRUE(policy.admissible(rows[0], seq_of(1, 10), params_of(10), reserving));
  EXPECT_TRUE(policy.admissible(rows[1], seq_of(2, 10), params_of(10), reserving));
  EXPECT_EQ(reserving, 16);
  EXPECT_FALSE(policy.admissible(rows[2], seq_of(3, 10), params_of(10), reserving));
  policy.granted(rows[0], seq_of(1, 10), params_of(10));
  policy.granted(rows[1], seq_of(2, 10), params_of(10));
  EXPECT_EQ(policy.num_reserved_blocks(), 16);
  // A granted row keeps its reservation: admitted again without counting.
  int32_t next = policy.num_reserved_blocks();
  EXPECT_TRUE(policy.admissible(rows[0], seq_of(1, 11), params_of(10), next));
  EXPECT_EQ(next, 16);
  policy.left(rows[0]);
  EXPECT_EQ(policy.num_reserved_blocks(), 8);
  next = policy.num_reserved_blocks();
  EXPECT_TRUE(policy.admissible(rows[2], seq_of(3, 10), params_of(10), next));
}

} // namespace
} // namespace kvactor
