#pragma once
// The normalizer of a tokenizer.json: the steps applied to every stretch of
// text between added tokens before it is split and encoded. Unicode forms
// and case come from utf8proc; the rest is plain string work.
//
//   NFC NFD NFKC NFKD   Unicode normalisation forms
//   Lowercase           every character to its lowercase form
//   Replace             every occurrence of a literal string
//   Prepend             a string before non-empty text
//   Strip               White_Space from the left and/or right

#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

struct normalizer_step {
  enum class kind { nfc, nfd, nfkc, nfkd, lowercase, replace, prepend, strip };
  kind what = kind::nfc;
  std::string pattern; // replace: what is replaced
  std::string content; // replace: its replacement; prepend: what is prepended
  bool left = false;   // strip
  bool right = false;  // strip
};

// Applies the steps in order. `text` is valid UTF-8 (invalid text is passed
// through the Unicode steps unchanged).
std::string normalize(std::string_view text, const std::vector<normalizer_step>& steps);

} // namespace kvactor::model
