#include "base/utf8.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvactor {
namespace {

TEST(utf8, decodes_valid_sequences) {
  const std::string s = "a\u00e9\u65e5\U0001F642";
  std::vector<uint32_t> cps;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = decode_utf8(s, i);
    ASSERT_TRUE(c.valid);
    cps.push_back(c.code_point);
    i += c.length;
  }
  EXPECT_EQ(cps, (std::vector<uint32_t>{'a', 0xe9, 0x65e5, 0x1f642}));
  std::string back;
  for (auto cp : cps) append_utf8(back, cp);
  EXPECT_EQ(back, s);
}

TEST(utf8, rejects_invalid_sequences_one_byte_at_a_time) {
  for (std::string_view bad : {"\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
                               "\xf4\x90\x80\x80", "\xff", "\xe6\x97", "\xc3("}) {
    const auto c = decode_utf8(bad, 0);
    EXPECT_FALSE(c.valid) << "bytes of length " << bad.size();
    EXPECT_EQ(c.length, 1);
  }
}

TEST(utf8, decodes_backwards_the_character_before_a_position) {
  const std::string s = "a\u00e9\u4e2d\U0001f600";
  auto c = decode_utf8_before(s, s.size());
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.code_point, 0x1f600u);
  EXPECT_EQ(c.length, 4);
  c = decode_utf8_before(s, s.size() - 4);
  EXPECT_EQ(c.code_point, 0x4e2du);
  c = decode_utf8_before(s, 3);
  EXPECT_EQ(c.code_point, 0xe9u);
  EXPECT_EQ(decode_utf8_before(s, 1).code_point, uint32_t('a'));
  // A sequence that starts before `begin` is not taken whole.
  EXPECT_FALSE(decode_utf8_before(s, 3, 2).valid);
  // A lone continuation byte or a cut sequence: the last byte, invalid.
  const std::string bad = "x\x80";
  EXPECT_FALSE(decode_utf8_before(bad, 2).valid);
  EXPECT_EQ(decode_utf8_before(bad, 2).length, 1);
  const std::string cut = "\xe4\xb8"; // the first two bytes of U+4E2D
  EXPECT_FALSE(decode_utf8_before(cut, 2).valid);
}

TEST(utf8, incomplete_tail) {
  EXPECT_EQ(incomplete_utf8_tail(""), 0u);
  EXPECT_EQ(incomplete_utf8_tail("abc"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xc3"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe6\x97"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x99"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x99\x82"), 0u); // complete
  // stray continuation: invalid, not incomplete
  EXPECT_EQ(incomplete_utf8_tail("a\x80"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("\xe0\x80"), 0u);          // overlong start: can never complete
  EXPECT_EQ(incomplete_utf8_tail("\xff"), 0u);
}

TEST(utf8, validates_and_repairs_utf8) {
  EXPECT_TRUE(is_valid_utf8("plain caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));         // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));     // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80")); // surrogate
  EXPECT_EQ(replace_invalid_utf8("a\xff" "b\xc3"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  EXPECT_EQ(replace_invalid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
}

} // namespace
} // namespace kvactor
