#include "model/tokenizer/unicode.hpp"

#include <set>

#include <gtest/gtest.h>

#include "model/tokenizer/byte_level.hpp"

namespace kvactor::model {
namespace {

TEST(unicode, decodes_valid_sequences) {
  const std::string s = "a\u00e9\u65e5\U0001F642";
  std::vector<std::uint32_t> cps;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = decode_utf8(s, i);
    ASSERT_TRUE(c.valid);
    cps.push_back(c.code_point);
    i += c.length;
  }
  EXPECT_EQ(cps, (std::vector<std::uint32_t>{'a', 0xe9, 0x65e5, 0x1f642}));
  std::string back;
  for (auto cp : cps) append_utf8(back, cp);
  EXPECT_EQ(back, s);
}

TEST(unicode, rejects_invalid_sequences_one_byte_at_a_time) {
  for (std::string_view bad : {"\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff",
                               "\xe6\x97", "\xc3("}) {
    const auto c = decode_utf8(bad, 0);
    EXPECT_FALSE(c.valid) << "bytes of length " << bad.size();
    EXPECT_EQ(c.length, 1);
  }
}

TEST(unicode, incomplete_tail) {
  EXPECT_EQ(incomplete_utf8_tail(""), 0u);
  EXPECT_EQ(incomplete_utf8_tail("abc"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xc3"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe6\x97"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x99"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x99\x82"), 0u); // complete
  EXPECT_EQ(incomplete_utf8_tail("a\x80"), 0u);             // stray continuation: invalid, not incomplete
  EXPECT_EQ(incomplete_utf8_tail("\xe0\x80"), 0u);          // overlong start: can never complete
  EXPECT_EQ(incomplete_utf8_tail("\xff"), 0u);
}

TEST(unicode, classes) {
  for (std::uint32_t cp : std::initializer_list<std::uint32_t>{'a', 'Z', 0xe9, 0x3b1, 0x416, 0x5d0, 0x627, 0x65e5, 0x30c6, 0xd55c, 0x1c5})
    EXPECT_TRUE(is_letter(cp)) << std::hex << cp;
  for (std::uint32_t cp : std::initializer_list<std::uint32_t>{'0', '9', 0x663, 0xbd, 0x216b, 0xff11}) EXPECT_TRUE(is_number(cp)) << std::hex << cp;
  for (std::uint32_t cp : std::initializer_list<std::uint32_t>{' ', '\t', '\n', '\r', 0xa0, 0x2009, 0x3000, 0x2028}) EXPECT_TRUE(is_whitespace(cp));
  for (std::uint32_t cp : std::initializer_list<std::uint32_t>{'!', '_', 0x301 /* combining acute: Mn */, 0x1f642, 0x200b /* ZWSP is not \s */}) {
    EXPECT_FALSE(is_letter(cp)) << std::hex << cp;
    EXPECT_FALSE(is_number(cp)) << std::hex << cp;
    EXPECT_FALSE(is_whitespace(cp)) << std::hex << cp;
  }
}

TEST(byte_level, gpt2_alphabet) {
  EXPECT_EQ(byte_to_symbol(' '), 0x120u);  // 'Ġ'
  EXPECT_EQ(byte_to_symbol('\n'), 0x10au); // 'Ċ'
  EXPECT_EQ(byte_to_symbol('A'), static_cast<std::uint32_t>('A'));
  EXPECT_EQ(byte_to_symbol(0xad), 0x143u); // the last of the 68 remapped bytes
  std::set<std::uint32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const auto s = byte_to_symbol(static_cast<std::uint8_t>(b));
    seen.insert(s);
    EXPECT_EQ(symbol_to_byte(s), b);
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_FALSE(symbol_to_byte(0x144).has_value());
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(symbols_to_bytes(bytes_to_symbols(all)), all);
  EXPECT_EQ(bytes_to_symbols(" hi\n"), "\u0120hi\u010a");
  EXPECT_FALSE(symbols_to_bytes("\u4e00").has_value());
}

} // namespace
TEST(unicode, validates_and_repairs_utf8) {
  EXPECT_TRUE(is_valid_utf8("plain caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));         // truncated
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));     // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80")); // surrogate
  EXPECT_EQ(replace_invalid_utf8("a\xff" "b\xc3"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  EXPECT_EQ(replace_invalid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
}

} // namespace kvactor::model
