#pragma once
// The Unicode classes the pre-tokenizer patterns use: \p{L} (letters),
// \p{N} (numbers) and \s (White_Space); UTF-8 itself is base/utf8.hpp.

#include "base/utf8.hpp"

#include <cstdint>

namespace kvactor::model {

bool is_letter(uint32_t cp);     // general category L*
bool is_number(uint32_t cp);     // general category N*
bool is_whitespace(uint32_t cp); // the White_Space property, as regex \s

} // namespace kvactor::model
