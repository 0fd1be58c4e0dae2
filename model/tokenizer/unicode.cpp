#include "model/tokenizer/unicode.hpp"

#include <algorithm>

#include "model/tokenizer/unicode_tables.hpp"

namespace kvactor::model {
namespace {

bool in_ranges(uint32_t cp, const detail::code_point_range* ranges, std::size_t n) {
  const auto* end = ranges + n;
  const auto* it = std::upper_bound(
    ranges, end, cp, [](uint32_t v, const detail::code_point_range& r) { return v < r.first; });
  return it != ranges && cp <= (it - 1)->last;
}

} // namespace

bool is_letter(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(cp, detail::letter_ranges, detail::letter_ranges_size);
}

bool is_number(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(cp, detail::number_ranges, detail::number_ranges_size);
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0x85: case 0xa0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

} // namespace kvactor::model
