#include "model/grammar/utf8_ranges.hpp"

#include "base/utf8.hpp"

#include <algorithm>

namespace kvactor::model {

namespace {

constexpr uint32_t surrogate_lo = 0xD800, surrogate_hi = 0xDFFF;

int encoded_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// [lo, hi] of one encoded length: split until every byte position of the
// piece ranges freely between its ends' bytes.
void split(uint32_t lo, uint32_t hi, std::vector<utf8_byte_ranges>& out) {
  const int n = encoded_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1; // the last i bytes' bits
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      split(lo, lo | m, out);
      split((lo | m) + 1, hi, out);
      return;
    }
    if ((hi & m) != m) {
      split(lo, (hi & ~m) - 1, out);
      split(hi & ~m, hi, out);
      return;
    }
  }
  std::string a, b;
  append_utf8(a, lo);
  append_utf8(b, hi);
  utf8_byte_ranges seq;
  for (size_t k = 0; k < a.size(); ++k)
    seq.push_back({static_cast<uint8_t>(a[k]), static_cast<uint8_t>(b[k])});
  out.push_back(std::move(seq));
}

} // namespace

code_point_ranges normalize_code_points(code_point_ranges ranges) {
  code_point_ranges clipped;
  for (auto [lo, hi] : ranges) {
    hi = std::min(hi, max_code_point);
    if (lo > hi) continue;
    // NOTE: surrogates cut out of any range that spans them.
    if (lo < surrogate_lo && hi >= surrogate_lo) clipped.push_back({lo, surrogate_lo - 1});
    if (hi > surrogate_hi && lo <= surrogate_hi) clipped.push_back({surrogate_hi + 1, hi});
    if (hi < surrogate_lo || lo > surrogate_hi) clipped.push_back({lo, hi});
  }
  std::ranges::sort(clipped);
  code_point_ranges merged;
  for (auto [lo, hi] : clipped)
    if (!merged.empty() && lo <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, hi);
    else
      merged.push_back({lo, hi});
  return merged;
}

code_point_ranges complement_code_points(const code_point_ranges& ranges) {
  code_point_ranges out;
  uint32_t next = 0;
  for (auto [lo, hi] : ranges) {
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= max_code_point) out.push_back({next, max_code_point});
  return normalize_code_points(std::move(out));
}

std::vector<utf8_byte_ranges> utf8_sequences(const code_point_ranges& ranges) {
  static constexpr uint32_t length_ends[] = {0x7F, 0x7FF, 0xFFFF, max_code_point};
  std::vector<utf8_byte_ranges> out;
  for (auto [lo, hi] : ranges)
    for (uint32_t end : length_ends) {
      if (lo > hi) break;
      if (lo > end) continue;
      const uint32_t piece_hi = std::min(hi, end);
      split(lo, piece_hi, out);
      lo = piece_hi + 1;
    }
  return out;
}

} // namespace kvactor::model
