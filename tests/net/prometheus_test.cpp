#include "net/prometheus.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

histogram two_bounds(std::vector<int64_t> counts, double sum) {
  histogram h;
  h.bounds = {0.5, 1};
  h.counts = std::move(counts);
  h.sum = sum;
  h.count = 0;
  for (auto c : h.counts)
    h.count += c;
  return h;
}

// Every sample line: name{labels} -> value.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      const size_t space = line.rfind(' ');
      out[line.substr(0, space)] = line.substr(space + 1);
    }
  return out;
}

TEST(prometheus, writes_help_type_and_a_sample_for_each_metric) {
  runtime_figures f;
  f.running = 3;
  f.device_blocks_total = 8;
  f.device_blocks_used = 2;
  f.tokens_generated = 41;
  f.prefix_queries = 10;
  f.prefix_hits = 4;
  f.preemptions = 5;
  f.preemptions_by_swap = 3;
  f.swap_outs_refused = 1;
  f.time_to_first_token = two_bounds({1, 0, 2}, 7.25);
  const std::string text = format_metrics(f, "my \"model\"");
  const auto s = samples(text);
  const std::string l = R"(model_name="my \"model\"")";
  EXPECT_EQ(s.at("kvactor:num_requests_running{" + l + "}"), "3");
  EXPECT_EQ(s.at("kvactor:kv_cache_usage_perc{" + l + "}"), "0.25");
  EXPECT_EQ(s.at("kvactor:generation_tokens_total{" + l + "}"), "41");
  EXPECT_EQ(s.at("kvactor:prefix_cache_hits_total{" + l + "}"), "4");
  EXPECT_EQ(s.at("kvactor:num_preemptions_total{" + l + "}"), "5");
  EXPECT_EQ(s.at("kvactor:num_preemptions_by_swap_total{" + l + "}"), "3");
  EXPECT_EQ(s.at("kvactor:swap_outs_refused_total{" + l + "}"), "1");
  // Buckets are cumulative and end at +Inf with the count.
  EXPECT_EQ(s.at("kvactor:time_to_first_token_seconds_bucket{" + l + ",le=\"0.5\"}"), "1");
  EXPECT_EQ(s.at("kvactor:time_to_first_token_seconds_bucket{" + l + ",le=\"1\"}"), "1");
  EXPECT_EQ(s.at("kvactor:time_to_first_token_seconds_bucket{" + l + ",le=\"+Inf\"}"), "3");
  EXPECT_EQ(s.at("kvactor:time_to_first_token_seconds_count{" + l + "}"), "3");
  EXPECT_EQ(s.at("kvactor:time_to_first_token_seconds_sum{" + l + "}"), "7.25");
  EXPECT_THAT(text, HasSubstr("# TYPE kvactor:num_requests_running gauge\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE kvactor:generation_tokens_total counter\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE kvactor:time_to_first_token_seconds histogram\n"));

  // Each family has its HELP and TYPE before its samples.
  std::istringstream in(text);
  std::string family;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line.substr(7, family.size()), family);
      continue;
    }
    EXPECT_EQ(line.rfind(family, 0), 0u) << line << " outside family " << family;
  }
}

} // namespace
} // namespace kvactor::net
