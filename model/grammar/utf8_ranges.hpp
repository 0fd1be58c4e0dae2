#pragma once
// Unicode code-point ranges as UTF-8 byte patterns: [lo, hi] becomes a few
// runs of byte ranges, each byte of a run free within its range, so that a
// byte-level grammar matches exactly the characters of the ranges. Surrogates
// (U+D800..U+DFFF) are never included: UTF-8 has no encoding for them.
//
//   [U+0080, U+07FF]        -> [C2-DF][80-BF]
//   [U+0041, U+00E9]        -> [41-7F] | [C2][80-BF] | [C3][80-A9]

#include <cstdint>
#include <utility>
#include <vector>

namespace kvactor::model {

using code_point_ranges = std::vector<std::pair<uint32_t, uint32_t>>;
using utf8_byte_ranges = std::vector<std::pair<uint8_t, uint8_t>>; // one per byte

constexpr uint32_t max_code_point = 0x10FFFF;

// Sorted, merged, clipped to [0, max_code_point], surrogates removed.
code_point_ranges normalize_code_points(code_point_ranges ranges);
// Every code point (but surrogates) not in the normalized `ranges`.
code_point_ranges complement_code_points(const code_point_ranges& ranges);
// The byte patterns of the normalized `ranges`.
std::vector<utf8_byte_ranges> utf8_sequences(const code_point_ranges& ranges);

} // namespace kvactor::model
