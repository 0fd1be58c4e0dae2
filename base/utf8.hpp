#pragma once
// UTF-8: decoding with the validity rules the tokenizer, the request checks
// and the JSON writers share, encoding, and repair of invalid bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvactor {

struct utf8_char {
  uint32_t code_point = 0; // U+FFFD when !valid
  uint8_t length = 1;      // bytes consumed (1 for an invalid byte)
  bool valid = false;
};

// Decodes the UTF-8 sequence starting at s[pos] (pos < s.size()). Overlong
// forms, surrogates, code points past U+10FFFF and truncated sequences are
// invalid and consume one byte.
utf8_char decode_utf8(std::string_view s, std::size_t pos);

// Decodes the character that ends at s[end - 1] (begin < end), starting no
// earlier than s[begin]: for scanning backwards. Where no valid sequence
// ends there, the last byte alone, invalid.
utf8_char decode_utf8_before(std::string_view s, std::size_t end, std::size_t begin = 0);

void append_utf8(std::string& out, uint32_t code_point);

// True when every byte of `s` belongs to a valid UTF-8 sequence.
bool is_valid_utf8(std::string_view s);

// `s` with every invalid byte replaced by U+FFFD.
std::string replace_invalid_utf8(std::string_view s);

// The number of bytes at the end of `s` that start a UTF-8 sequence which
// is valid so far but incomplete (0..3).
std::size_t incomplete_utf8_tail(std::string_view s);

} // namespace kvactor
