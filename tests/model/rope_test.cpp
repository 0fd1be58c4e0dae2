#include "model/rope.hpp"

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

model_config with(int64_t head_dim, double theta) {
  model_config c;
  c.head_dim = head_dim;
  c.rope_theta = theta;
  return c;
}

TEST(rope, default_frequencies) {
  const auto f = rope_inv_freq(with(8, 10000.0));
  ASSERT_EQ(f.size(), 4u);
  // 1 / 10000^(0/8), 10000^(-2/8) = 0.1, 10000^(-4/8) = 0.01, 10000^(-6/8) = 0.001
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_NEAR(f[1], 0.1, 1e-15);
  EXPECT_NEAR(f[2], 0.01, 1e-16);
  EXPECT_NEAR(f[3], 0.001, 1e-17);
}

TEST(rope, linear_scaling_divides_every_frequency) {
  auto c = with(8, 10000.0);
  c.rope_scaling.type = rope_scaling::kind::linear;
  c.rope_scaling.factor = 4.0;
  const auto f = rope_inv_freq(c);
  EXPECT_DOUBLE_EQ(f[0], 0.25);
  EXPECT_NEAR(f[2], 0.0025, 1e-17);
}

TEST(rope, llama3_scaling_by_wavelength) {
  // theta = 16 and head_dim 8: inv_freq = 1, 1/2, 1/4, 1/8;
  // wavelengths 2*pi*{1, 2, 4, 8} = 6.28, 12.57, 25.13, 50.27.
  // old context 64, low_freq_factor 2, high_freq_factor 8:
  //   high_freq_wavelen 8 -> 6.28 stays; low_freq_wavelen 32 -> 50.27 is divided by factor 4;
  //   12.57 and 25.13 are blended with smooth = (64 / wavelen - 2) / 6:
  //   pair 1: s = (16/pi - 2) / 6, (1 - s) / 8 + s / 2 = 1/8 + 3s/8 = 1/pi;
  //   pair 2: s = (8/pi - 2) / 6, (1 - s) / 16 + s / 4 = 1/16 + 3s/16 = 1/(4 pi).
  auto c = with(8, 16.0);
  c.rope_scaling.type = rope_scaling::kind::llama3;
  c.rope_scaling.factor = 4.0;
  c.rope_scaling.low_freq_factor = 2.0;
  c.rope_scaling.high_freq_factor = 8.0;
  c.rope_scaling.original_max_position_embeddings = 64;
  const auto f = rope_inv_freq(c);
  const double pi = std::numbers::pi;
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_NEAR(f[1], 1 / pi, 1e-14);
  EXPECT_NEAR(f[2], 1 / (4 * pi), 1e-14);
  EXPECT_DOUBLE_EQ(f[3], 0.125 / 4);
}

TEST(rope, frequency_divisors_divide_each_pair_after_the_scaling) {
  // GGUF's rope_freqs: one divisor per pair, on top of linear scaling by 2.
  auto c = with(8, 10000.0);
  c.rope_scaling.type = rope_scaling::kind::linear;
  c.rope_scaling.factor = 2.0;
  c.rope_scaling.frequency_divisors = {1.0, 4.0, 0.5, 8.0};
  const auto f = rope_inv_freq(c);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_DOUBLE_EQ(f[0], 0.5);
  EXPECT_NEAR(f[1], 0.1 / 8, 1e-16);
  EXPECT_NEAR(f[2], 0.01, 1e-16);
  EXPECT_NEAR(f[3], 0.001 / 16, 1e-18);
}

} // namespace
} // namespace kvactor::model
