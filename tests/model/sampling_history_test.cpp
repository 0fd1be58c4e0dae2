#include "model/sampling_history.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

TEST(sampling_history, repetition_penalty_covers_prompt_and_output_once) {
  const std::vector<token_id> prompt = {1, 1, 3};
  sampling_history h(prompt);
  h.add_output(3);
  h.add_output(4);
  std::vector<float> l = {2.0f, 2.0f, 2.0f, -2.0f, 4.0f, 2.0f};
  sampling_params p;
  p.repetition_penalty = 2.0f;
  h.apply_penalties(l, p);
  // 1 and 4 positive: halved; 3 negative: doubled, once though in both.
  EXPECT_EQ(l, (std::vector<float>{2.0f, 1.0f, 2.0f, -4.0f, 2.0f, 2.0f}));
  EXPECT_EQ(h.num_outputs(), 2);
}

TEST(sampling_history, frequency_and_presence_penalties_read_output_counts) {
  sampling_history h(std::vector<token_id>{0});
  for (token_id t : {2, 2, 2, 1})
    h.add_output(t);
  std::vector<float> l = {1.0f, 1.0f, 1.0f};
  sampling_params p;
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  h.apply_penalties(l, p);
  // The prompt's token 0 is untouched; 1 once, 2 three times.
  EXPECT_FLOAT_EQ(l[0], 1.0f);
  EXPECT_FLOAT_EQ(l[1], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[2], 1.0f - 1.5f - 0.25f);
}

TEST(sampling_history, negative_penalties_favour_repeats) {
  sampling_history h;
  h.add_output(1);
  std::vector<float> l = {0.0f, 0.0f};
  sampling_params p;
  p.presence_penalty = -1.0f;
  h.apply_penalties(l, p);
  EXPECT_EQ(l, (std::vector<float>{0.0f, 1.0f}));
}

} // namespace
} // namespace kvactor::model
