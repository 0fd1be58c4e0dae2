#include "model/tokenizer/unicode.hpp"

#include <set>

#include <gtest/gtest.h>

#include "model/tokenizer/byte_level.hpp"

namespace kvactor::model {
namespace {

TEST(unicode, classes) {
  for (uint32_t cp : std::initializer_list<uint32_t>{'a', 'Z', 0xe9, 0x3b1, 0x416, 0x5d0, 0x627,
                                                     0x65e5, 0x30c6, 0xd55c, 0x1c5})
    EXPECT_TRUE(is_letter(cp)) << std::hex << cp;
  for (uint32_t cp : std::initializer_list<uint32_t>{'0', '9', 0x663, 0xbd, 0x216b, 0xff11})
    EXPECT_TRUE(is_number(cp)) << std::hex << cp;
  for (uint32_t cp :
       std::initializer_list<uint32_t>{' ', '\t', '\n', '\r', 0xa0, 0x2009, 0x3000, 0x2028})
    EXPECT_TRUE(is_whitespace(cp));
  for (uint32_t cp : std::initializer_list<uint32_t>{'!', '_', 0x301 /* combining acute: Mn */,
                                                     0x1f642, 0x200b /* ZWSP is not \s */}) {
    EXPECT_FALSE(is_letter(cp)) << std::hex << cp;
    EXPECT_FALSE(is_number(cp)) << std::hex << cp;
    EXPECT_FALSE(is_whitespace(cp)) << std::hex << cp;
  }
}

TEST(byte_level, gpt2_alphabet) {
  EXPECT_EQ(byte_to_symbol(' '), 0x120u);  // 'Ġ'
  EXPECT_EQ(byte_to_symbol('\n'), 0x10au); // 'Ċ'
  EXPECT_EQ(byte_to_symbol('A'), static_cast<uint32_t>('A'));
  EXPECT_EQ(byte_to_symbol(0xad), 0x143u); // the last of the 68 remapped bytes
  std::set<uint32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const auto s = byte_to_symbol(static_cast<uint8_t>(b));
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
} // namespace kvactor::model
