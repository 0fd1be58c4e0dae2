// UTF-8 decoding, encoding and validation.

#include "base/utf8.hpp"

namespace kvactor {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// Sequence length announced by a lead byte; 0 for bytes that cannot lead.
std::size_t lead_length(unsigned char c) {
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return 2;
  if (c >= 0xe0 && c <= 0xef) return 3;
  if (c >= 0xf0 && c <= 0xf4) return 4;
  return 0;
}

// Whether the second byte is allowed after `lead` (rules out overlong forms,
// surrogates and code points past U+10FFFF).
bool second_byte_ok(unsigned char lead, unsigned char c) {
  switch (lead) {
    case 0xe0: return c >= 0xa0 && c <= 0xbf;
    case 0xed: return c >= 0x80 && c <= 0x9f;
    case 0xf0: return c >= 0x90 && c <= 0xbf;
    case 0xf4: return c >= 0x80 && c <= 0x8f;
    default: return is_continuation(c);
  }
}

} // namespace

utf8_char decode_utf8(std::string_view s, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  const std::size_t len = lead_length(lead);
  if (len == 1) return {lead, 1, true};
  if (len == 0 || pos + len > s.size()) return {0xfffd, 1, false};
  if (!second_byte_ok(lead, static_cast<unsigned char>(s[pos + 1]))) return {0xfffd, 1, false};
  uint32_t cp = lead & (0x7f >> len);
  for (std::size_t i = 1; i < len; ++i) {
    const auto c = static_cast<unsigned char>(s[pos + i]);
    if (!is_continuation(c)) return {0xfffd, 1, false};
    cp = (cp << 6) | (c & 0x3f);
  }
  return {cp, static_cast<uint8_t>(len), true};
}

utf8_char decode_utf8_before(std::string_view s, std::size_t end, std::size_t begin) {
  std::size_t start = end - 1;
  while (start > begin && end - start < 4 && is_continuation(static_cast<unsigned char>(s[start])))
    --start;
  const auto c = decode_utf8(s.substr(0, end), start);
  if (c.valid && start + c.length == end) return c;
  return {0xfffd, 1, false};
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::size_t incomplete_utf8_tail(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if (is_continuation(c)) continue;
    const std::size_t len = lead_length(c);
    if (len <= back) return 0; // complete, or not a lead byte at all
    // Every byte present so far must be acceptable.
    if (back >= 2 && !second_byte_ok(c, static_cast<unsigned char>(s[n - back + 1]))) return 0;
    return back;
  }
  return 0;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const utf8_char c = decode_utf8(s, i);
    if (!c.valid)
      return false;
    i += c.length;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const utf8_char c = decode_utf8(s, i);
    if (c.valid)
      out.append(s.substr(i, c.length));
    else
      append_utf8(out, 0xfffd);
    i += c.length;
  }
  return out;
}

} // namespace kvactor
