#include "model/grammar/utf8_ranges.hpp"

#include "base/utf8.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

// How many of `patterns` match `bytes`.
int matches(const std::vector<utf8_byte_ranges>& patterns, const std::string& bytes) {
  int n = 0;
  for (const utf8_byte_ranges& p : patterns) {
    if (p.size() != bytes.size()) continue;
    bool all = true;
    for (size_t k = 0; k < p.size(); ++k) {
      const auto b = static_cast<uint8_t>(bytes[k]);
      all = all && b >= p[k].first && b <= p[k].second;
    }
    n += all;
  }
  return n;
}

TEST(utf8_ranges, every_code_point_matches_exactly_when_in_its_ranges) {
  const code_point_ranges ranges = normalize_code_points({{0x41, 0x5A},
                                                          {0xE9, 0x3A9},
                                                          {0x7F0, 0x801},
                                                          {0xD700, 0xE010},
                                                          {0xFFF0, 0x10010},
                                                          {0x10FFF0, 0x10FFFF}});
  const auto patterns = utf8_sequences(ranges);
  for (uint32_t cp = 0; cp <= max_code_point; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string bytes;
    append_utf8(bytes, cp);
    bool in = false;
    for (auto [lo, hi] : ranges) in = in || (cp >= lo && cp <= hi);
    ASSERT_EQ(matches(patterns, bytes), in ? 1 : 0) << std::hex << cp;
  }
}

TEST(utf8_ranges, surrogates_are_never_included_and_complements_cover_the_rest) {
  const code_point_ranges all = normalize_code_points({{0, max_code_point}});
  EXPECT_EQ(all, (code_point_ranges{{0, 0xD7FF}, {0xE000, max_code_point}}));
  const code_point_ranges some = normalize_code_points({{'a', 'z'}, {'0', '9'}, {'c', 'e'}});
  EXPECT_EQ(some, (code_point_ranges{{'0', '9'}, {'a', 'z'}}));
  EXPECT_EQ(complement_code_points(some),
            (code_point_ranges{
              {0, '0' - 1}, {'9' + 1, 'a' - 1}, {'z' + 1, 0xD7FF}, {0xE000, max_code_point}}));
  EXPECT_TRUE(complement_code_points(all).empty());
}

} // namespace
} // namespace kvactor::model
