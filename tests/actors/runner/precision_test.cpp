#include "actors/runner/precision.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using model::dtype;
using ::testing::HasSubstr;
constexpr auto f32 = dtype::f32;
constexpr auto bf16 = dtype::bf16;
const std::optional<dtype> automatic = std::nullopt;

// The checkpoint's dtype, and whether anyone asked for it.
struct checkpoint {
  dtype stored;
  bool read = false;
  std::function<result<dtype>()> reader() {
    return [this]() -> result<dtype> {
      read = true;
      return stored;
    };
  }
};

precision choose(std::optional<dtype> weights, std::optional<dtype> activations, bool cuda,
                 checkpoint& c) {
  auto p = choose_precision(weights, activations, cuda, c.reader());
  EXPECT_TRUE(p) << p.error().message;
  return p ? *p : precision{};
}

TEST(precision, auto_activations_are_bf16_only_on_cuda_with_bf16_matrices) {
  checkpoint bf16_ckpt{bf16}, f32_ckpt{f32};
  auto on_gpu = choose(automatic, automatic, true, bf16_ckpt);
  EXPECT_EQ(on_gpu.matrices, bf16);
  EXPECT_EQ(on_gpu.activations, bf16);
  auto on_cpu = choose(automatic, automatic, false, bf16_ckpt);
  EXPECT_EQ(on_cpu.matrices, bf16); // kept bf16, widened exactly by the products
  EXPECT_EQ(on_cpu.activations, f32);
  auto f32_on_gpu = choose(automatic, automatic, true, f32_ckpt);
  EXPECT_EQ(f32_on_gpu.matrices, f32);
  EXPECT_EQ(f32_on_gpu.activations, f32);
  auto forced_f32 = choose(f32, automatic, true, bf16_ckpt);
  EXPECT_EQ(forced_f32.matrices, f32);
  EXPECT_EQ(forced_f32.activations, f32);
}

TEST(precision, explicit_choices_stand_and_read_no_checkpoint) {
  checkpoint c{f32};
  auto p = choose(bf16, f32, true, c);
  EXPECT_EQ(p.matrices, bf16);
  EXPECT_EQ(p.activations, f32);
  auto q = choose(automatic, bf16, false, c); // bf16 activations need bf16 matrices
  EXPECT_EQ(q.matrices, bf16);
  EXPECT_EQ(q.activations, bf16);
  EXPECT_FALSE(c.read);
}

TEST(precision, refuses_bf16_activations_over_f32_weights) {
  checkpoint c{bf16};
  auto p = choose_precision(f32, bf16, true, c.reader());
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message, HasSubstr("weights 'f32' with activations 'bf16'"));
}

TEST(precision, passes_on_a_checkpoint_that_cannot_be_read) {
  auto p = choose_precision(automatic, automatic, true,
                            [] { return result<dtype>(error{"model folder: no config.json"}); });
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message, HasSubstr("no config.json"));
}

} // namespace
} // namespace kvactor
