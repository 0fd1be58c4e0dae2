#include "model/dtype.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

TEST(dtype, names_round_trip) {
  for (dtype t : {dtype::f32, dtype::f16, dtype::bf16})
    EXPECT_EQ(parse_dtype(safetensors_name(t)), t);
  EXPECT_FALSE(parse_dtype("I64").has_value());
  EXPECT_EQ(safetensors_dtype_size("I64"), 8u);
  EXPECT_FALSE(safetensors_dtype_size("F12").has_value());
}

TEST(dtype, bf16_known_values) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to even -> 1.
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even) -> up.
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(dtype, f16_known_values) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001); // smallest subnormal
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000); // tie to even -> 0
  EXPECT_EQ(f32_to_f16(0x1p-14f), 0x0400); // smallest normal
  EXPECT_EQ(f16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_to_f32(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(dtype, every_f16_round_trips_through_f32) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float f = f16_to_f32(x);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), x) << "f16 bits " << h;
  }
}

TEST(dtype, convert_unaligned_buffers) {
  const float values[] = {0.5f, -1.25f, 3.0f};
  std::vector<std::byte> raw(1 + sizeof(values));
  std::memcpy(raw.data() + 1, values, sizeof(values)); // misaligned on purpose
  std::vector<float> out(3);
  convert_to_f32(raw.data() + 1, dtype::f32, out);
  EXPECT_EQ(out, std::vector<float>(values, values + 3));
  std::vector<uint16_t> b(3);
  convert_to_bf16(raw.data() + 1, dtype::f32, b);
  EXPECT_EQ(b[1], f32_to_bf16(-1.25f));
  std::vector<std::byte> halves(1 + 6);
  for (int i = 0; i < 3; ++i) {
    const uint16_t h = f32_to_f16(values[i]);
    std::memcpy(halves.data() + 1 + 2 * i, &h, 2);
  }
  convert_to_f32(halves.data() + 1, dtype::f16, out);
  EXPECT_EQ(out, std::vector<float>(values, values + 3));
}

} // namespace
} // namespace kvactor::model
