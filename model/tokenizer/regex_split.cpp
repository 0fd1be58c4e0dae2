#include "model/tokenizer/regex_split.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace kvactor::model {

struct regex_split::code {
  explicit code(pcre2_code* c) : compiled(c) {}
  ~code() { pcre2_code_free(compiled); }
  code(const code&) = delete;
  code& operator=(const code&) = delete;

  pcre2_code* compiled;
};

result<regex_split> regex_split::compile(std::string_view regex) {
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  // NOTE: UCP gives \s, \w, \d and [[:classes:]] their Unicode meanings, as
  // the Oniguruma of Hugging Face's tokenizers has them.
  constexpr uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(), options,
                                &code_error, &offset, nullptr);
  if (!c) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code_error, message, sizeof message);
    std::string what = "regex '";
    what += regex;
    what += "' does not compile at offset ";
    what += std::to_string(offset);
    what += ": ";
    what += reinterpret_cast<const char*>(message);
    return error{std::move(what)};
  }
  pcre2_jit_compile(c, PCRE2_JIT_COMPLETE); // without JIT (an error here) it interprets
  return regex_split(std::string(regex), std::make_shared<const code>(c));
}

std::vector<std::string_view> regex_split::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
    pcre2_match_data_create_from_pattern(code_->compiled, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap = 0; // where the stretch before the next match starts
  for (size_t at = 0; at <= text.size();) {
    const int rc = pcre2_match(code_->compiled, subject, text.size(), at, 0, match.get(), nullptr);
    if (rc < 0) // PCRE2_ERROR_NOMATCH, or a limit: the rest is one stretch
      break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ov[0], end = ov[1];
    if (end == begin) { // an empty match splits nothing; try one character on
      at = begin + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80)
        ++at;
      continue;
    }
    if (begin > gap)
      pieces.push_back(text.substr(gap, begin - gap));
    pieces.push_back(text.substr(begin, end - begin));
    gap = at = end;
  }
  if (gap < text.size())
    pieces.push_back(text.substr(gap));
  return pieces;
}

} // namespace kvactor::model
