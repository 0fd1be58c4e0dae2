#pragma once
// The decoder of a tokenizer.json: how token strings turn back into text.
// Steps before Fuse act on each token's string (ByteLevel symbols to bytes,
// '▁' to space, "<0x0A>" to its byte); after Fuse, the text is one string,
// and kvactor takes Strip there (a leading or trailing character trimmed
// once per decode) and Replace of one character.
//
// A token's text is what it adds inside a longer text (token_text), so a
// stream of tokens decodes piece by piece; decode() of a whole sequence
// also applies the rules for the text's first token (Metaspace drops its
// '▁') and the trims after Fuse (Llama 2's leading space).

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "model/tokenizer/metaspace.hpp"

namespace kvactor::model {

struct decoder_step {
  enum class kind { byte_level, byte_fallback, replace, strip, metaspace, fuse };
  kind what = kind::byte_level;
  std::string pattern;       // replace
  std::string content;       // replace: the replacement; strip: the one character
  int start = 0, stop = 0;   // strip: at most this many from the left / right
  std::string replacement;   // metaspace
  metaspace::prepend prepend_scheme = metaspace::prepend::always; // metaspace
};

class token_decoder {
public:
  // Checks that kvactor can apply the steps; `where` names the file in errors.
  static result<token_decoder> make(std::vector<decoder_step> steps, std::string_view where);

  // The text of a token string (a vocabulary entry or an added token's
  // content), as the first token of a text or after others.
  std::string token_text(std::string_view token, bool first) const;
  // Whether the first token decodes differently (Metaspace).
  bool first_token_differs() const { return first_differs_; }
  // The trims of a whole decoded text (steps after Fuse).
  void finish(std::string& text) const;

private:
  std::vector<decoder_step> per_token_; // before Fuse, and one-character Replace after
  std::vector<decoder_step> whole_;     // Strip after Fuse
  bool first_differs_ = false;
};

} // namespace kvactor::model
