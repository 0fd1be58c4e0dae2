// The names of engine_config's modes and reading them back from the tools'
// options (actors/engine_options.cpp).

#include "kvactor/kvactor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvactor {
namespace {

using ::testing::HasSubstr;

// Every value's name reads back to the value (into a field holding another).
template <class T>
void expect_round_trip(std::initializer_list<T> values) {
  for (T v : values) {
    T out = v == *values.begin() ? *(values.begin() + 1) : *values.begin();
    EXPECT_FALSE(parse_option("--x", to_string(v), out)) << to_string(v);
    EXPECT_EQ(out, v) << to_string(v);
  }
}

TEST(engine_options, every_name_reads_back_to_its_value) {
  expect_round_trip({preemption_mode::swap, preemption_mode::recompute});
  expect_round_trip({batching_mode::continuous, batching_mode::fixed, batching_mode::padded});
  expect_round_trip({kv_reservation::paged, kv_reservation::contiguous});
  expect_round_trip({number_format::f32, number_format::bf16, number_format::q8_0,
                     number_format::q4_0, number_format::q4_k, number_format::q6_k});
}

TEST(engine_options, names_are_the_options_spellings) {
  EXPECT_STREQ(to_string(batching_mode::fixed), "static");
  EXPECT_STREQ(to_string(preemption_mode::recompute), "recompute");
  EXPECT_STREQ(to_string(kv_reservation::contiguous), "contiguous");
  EXPECT_STREQ(to_string(number_format::bf16), "bf16");
}

TEST(engine_options, auto_is_nullopt_where_it_is_allowed) {
  std::optional<number_format> weights = number_format::bf16;
  EXPECT_FALSE(parse_option("--weights", "auto", weights));
  EXPECT_EQ(weights, std::nullopt);
  EXPECT_FALSE(parse_option("--weights", "f32", weights));
  EXPECT_EQ(weights, number_format::f32);
  number_format kv = number_format::bf16;
  auto err = parse_option("--kv-dtype", "auto", kv);
  EXPECT_EQ(code_of(err), errc::invalid_config);
  EXPECT_EQ(kv, number_format::bf16);
}

// A name no value has: invalid_config, naming the option, the name and the
// names it takes, and the field as it was.
TEST(engine_options, an_unknown_name_is_an_error_naming_the_choices) {
  preemption_mode p = preemption_mode::recompute;
  caf::error err = parse_option("--preemption", "sometimes", p);
  EXPECT_EQ(code_of(err), errc::invalid_config);
  EXPECT_EQ(p, preemption_mode::recompute);
  ASSERT_TRUE(err.context().match_elements<std::string>());
  EXPECT_EQ(err.context().get_as<std::string>(0),
            "--preemption 'sometimes' is not swap or recompute");
  batching_mode b = batching_mode::continuous;
  err = parse_option("--batching", "fixed", b); // the enumerator's name is not the option's
  EXPECT_THAT(err.context().get_as<std::string>(0),
              HasSubstr("is not continuous or static or padded"));
  std::optional<number_format> activations;
  err = parse_option("--activations", "f16", activations);
  EXPECT_THAT(err.context().get_as<std::string>(0),
              HasSubstr("--activations 'f16' is not auto or f32 or bf16 or q8_0 or q4_0 or q4_1 or "
                        "q5_0 or q5_1 or q2_k or q3_k or q4_k or q5_k or q6_k or iq4_nl or "
                        "iq4_xs"));
}

} // namespace
} // namespace kvactor
