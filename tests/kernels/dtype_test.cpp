// The host fp16/bf16 storage types: exact where representable, round to
// nearest even otherwise, like the CUDA intrinsics.
#include "kernels/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kvactor::kernels {
namespace {

TEST(half_t, every_finite_half_round_trips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    half_t h;
    h.bits = static_cast<uint16_t>(b);
    const float f = static_cast<float>(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(half_t(f))));
      continue;
    }
    ASSERT_EQ(half_t(f).bits, h.bits) << "bits " << b << " value " << f;
  }
}

TEST(half_t, rounds_to_nearest_even) {
  // tie, even stays
  EXPECT_EQ(static_cast<float>(half_t(1.0f + 1.0f / 2048)), 1.0f);
  // tie, odd rounds up
  EXPECT_EQ(static_cast<float>(half_t(1.0f + 3.0f / 2048)), 1.0f + 4.0f / 2048);
  // above the tie
  EXPECT_EQ(static_cast<float>(half_t(1.0f + 1.1f / 2048)), 1.0f + 2.0f / 2048);
  EXPECT_EQ(static_cast<float>(half_t(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(half_t(65520.0f))));
  EXPECT_EQ(static_cast<float>(half_t(65519.0f)), 65504.0f);
  // smallest subnormal
  EXPECT_EQ(static_cast<float>(half_t(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(half_t(std::ldexp(1.0f, -26))), 0.0f);
  EXPECT_EQ(half_t(-0.0f).bits, 0x8000);
}

TEST(bfloat16_t, truncates_with_round_to_nearest_even) {
  EXPECT_EQ(bfloat16_t(1.0f).bits, 0x3f80);
  // tie, even stays
  EXPECT_EQ(static_cast<float>(bfloat16_t(1.0f + 1.0f / 256)), 1.0f);
  // tie, odd rounds up
  EXPECT_EQ(static_cast<float>(bfloat16_t(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_EQ(static_cast<float>(bfloat16_t(-3.5f)), -3.5f);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16_t(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(static_cast<float>(bfloat16_t(std::numeric_limits<float>::infinity()))));
}

} // namespace
} // namespace kvactor::kernels
