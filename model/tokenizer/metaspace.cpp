#include "model/tokenizer/metaspace.hpp"

namespace kvactor::model {

std::vector<std::string> metaspace::pre_tokenize(std::string_view text,
                                                 bool at_text_start) const {
  std::string s;
  s.reserve(text.size() + 8);
  const bool wants_prefix = prepend_scheme == prepend::always ||
                            (prepend_scheme == prepend::first && at_text_start);
  const bool starts_with_space = !text.empty() && text.front() == ' ';
  if (wants_prefix && !starts_with_space && !text.starts_with(replacement)) s = replacement;
  for (char c : text) {
    if (c == ' ')
      s += replacement;
    else
      s += c;
  }
  if (!split) return {std::move(s)};
  // Split before each replacement (merged with what follows it).
  std::vector<std::string> pieces;
  std::size_t start = 0;
  for (std::size_t pos = s.find(replacement, 1); pos != s.npos;
       pos = s.find(replacement, pos + replacement.size())) {
    pieces.push_back(s.substr(start, pos - start));
    start = pos;
  }
  pieces.push_back(s.substr(start));
  return pieces;
}

} // namespace kvactor::model
