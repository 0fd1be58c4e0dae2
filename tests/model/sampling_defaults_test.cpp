#include "model/sampling_defaults.hpp"

#include "model/tiny/tiny_model.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/model/temp_dir.hpp"

namespace kvactor::model {
namespace {

using ::testing::HasSubstr;
using test_support::temp_dir;
using test_support::write_file;

// Shaped like Qwen3's generation_config.json.
constexpr std::string_view qwen3_generation_config = R"({
  "bos_token_id": 151643,
  "do_sample": true,
  "eos_token_id": [151645, 151643],
  "pad_token_id": 151643,
  "temperature": 0.6,
  "top_k": 20,
  "top_p": 0.95,
  "transformers_version": "4.51.0"
})";

sampling_defaults parsed(std::string_view text) {
  auto d = parse_sampling_defaults(text, "g.json");
  EXPECT_TRUE(d) << text << " -> " << (d ? "" : d.error().message);
  return d ? *d : sampling_defaults{};
}

std::string refused(std::string_view text) {
  auto d = parse_sampling_defaults(text, "g.json");
  EXPECT_FALSE(d) << text;
  return d ? "" : d.error().message;
}

TEST(sampling_defaults, reads_the_keys_a_real_file_sets) {
  const auto d = parsed(qwen3_generation_config);
  EXPECT_FLOAT_EQ(d.temperature.value_or(-1), 0.6f);
  EXPECT_FLOAT_EQ(d.top_p.value_or(-1), 0.95f);
  EXPECT_EQ(d.top_k, std::optional<int32_t>(20));
  EXPECT_FALSE(d.min_p);
  EXPECT_FALSE(d.repetition_penalty);
  EXPECT_FALSE(d.empty());
}

TEST(sampling_defaults, reads_min_p_and_repetition_penalty_and_skips_nulls) {
  const auto d = parsed(R"({"min_p":0.05,"repetition_penalty":1.1,"top_p":null,"top_k":0})");
  EXPECT_FLOAT_EQ(d.min_p.value_or(-1), 0.05f);
  EXPECT_FLOAT_EQ(d.repetition_penalty.value_or(-1), 1.1f);
  EXPECT_FALSE(d.top_p);
  EXPECT_EQ(d.top_k, std::optional<int32_t>(0));
}

TEST(sampling_defaults, do_sample_false_is_greedy_whatever_the_temperature) {
  EXPECT_EQ(parsed(R"({"do_sample":false,"temperature":0.7})").temperature,
            std::optional<float>(0.0f));
  EXPECT_EQ(parsed(R"({"temperature":0.7,"do_sample":false})").temperature,
            std::optional<float>(0.0f));
  EXPECT_EQ(parsed(R"({"do_sample":false})").temperature, std::optional<float>(0.0f));
  EXPECT_FLOAT_EQ(parsed(R"({"do_sample":true,"temperature":0.7})").temperature.value_or(-1),
                  0.7f);
}

TEST(sampling_defaults, a_file_without_sampling_keys_sets_nothing) {
  EXPECT_TRUE(parsed(R"({"bos_token_id":1,"eos_token_id":2,"max_new_tokens":9})").empty());
}

TEST(sampling_defaults, takes_values_at_the_bounds) {
  const auto d = parsed(
    R"({"temperature":0,"top_p":1,"min_p":1,"top_k":-1,"repetition_penalty":1e-6})");
  EXPECT_EQ(d.temperature, std::optional<float>(0.0f));
  EXPECT_EQ(d.top_p, std::optional<float>(1.0f));
  EXPECT_EQ(d.min_p, std::optional<float>(1.0f));
  EXPECT_EQ(d.top_k, std::optional<int32_t>(-1));
  EXPECT_EQ(parsed(R"({"temperature":1e6})").temperature, std::optional<float>(1e6f));
}

TEST(sampling_defaults, refuses_values_out_of_range_naming_the_file_and_key) {
  struct case_t {
    const char* text;
    const char* key;
  };
  for (const case_t& c : {case_t{R"({"temperature":-0.1})", "temperature"},
                          case_t{R"({"temperature":2e6})", "temperature"},
                          case_t{R"({"top_p":0})", "top_p"},
                          case_t{R"({"top_p":1.01})", "top_p"},
                          case_t{R"({"min_p":-0.01})", "min_p"},
                          case_t{R"({"min_p":1.5})", "min_p"},
                          case_t{R"({"repetition_penalty":0})", "repetition_penalty"},
                          case_t{R"({"repetition_penalty":-1})", "repetition_penalty"},
                          case_t{R"({"top_k":-2})", "top_k"},
                          case_t{R"({"top_k":4294967296})", "top_k"},
                          case_t{R"({"top_k":20.5})", "top_k"},
                          case_t{R"({"top_p":"0.9"})", "top_p"},
                          case_t{R"({"do_sample":"yes"})", "do_sample"}}) {
    const std::string message = refused(c.text);
    EXPECT_THAT(message, HasSubstr("g.json")) << c.text;
    EXPECT_THAT(message, HasSubstr(std::string("key '") + c.key + "'")) << c.text;
  }
}

TEST(sampling_defaults, refuses_a_malformed_file) {
  EXPECT_THAT(refused("[1,2]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(refused(R"({"top_p":0.9)"), HasSubstr("invalid JSON"));
  EXPECT_THAT(refused(R"({"top_p":0.9} x)"), HasSubstr("g.json"));
}

TEST(sampling_defaults, loads_a_folder_and_takes_a_missing_file_as_none) {
  temp_dir dir;
  auto none = load_sampling_defaults(dir.path());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());

  write_file(dir / "generation_config.json", qwen3_generation_config);
  auto d = load_sampling_defaults(dir.path());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->top_k, std::optional<int32_t>(20));

  write_file(dir / "generation_config.json", R"({"top_p": 2})");
  auto bad = load_sampling_defaults(dir.path());
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr((dir / "generation_config.json").string()));
  EXPECT_THAT(bad.error().message, HasSubstr("key 'top_p'"));
}

TEST(sampling_defaults, describes_the_values_set) {
  EXPECT_EQ(to_string(parsed(qwen3_generation_config)), "temperature 0.6, top_p 0.95, top_k 20");
  EXPECT_EQ(to_string(sampling_defaults{}), "");
}

// The tiny model's tests expect greedy output by default: its
// generation_config.json must set no sampling default.
TEST(sampling_defaults, the_tiny_model_sets_none) {
  temp_dir dir;
  write_file(dir / "generation_config.json", tiny::generation_config_json(tiny::tiny_options{}));
  auto d = load_sampling_defaults(dir.path());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->empty());
}

} // namespace
} // namespace kvactor::model
