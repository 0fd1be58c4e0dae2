#include "model/tokenizer/normalizer.hpp"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {
namespace {

std::string map_with(std::string_view text, int options) {
  utf8proc_uint8_t* out = nullptr;
  const auto n =
    utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                 static_cast<utf8proc_ssize_t>(text.size()), &out,
                 static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n < 0) return std::string(text); // invalid UTF-8: left as it is
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = decode_utf8(text, i);
    if (!c.valid) {
      out += text[i++];
      continue;
    }
    append_utf8(out, static_cast<uint32_t>(utf8proc_tolower(static_cast<int32_t>(c.code_point))));
    i += c.length;
  }
  return out;
}

std::string replace_all(std::string_view text, std::string_view pattern,
                        std::string_view content) {
  if (pattern.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0;;) {
    const auto hit = text.find(pattern, pos);
    out += text.substr(pos, hit - pos);
    if (hit == text.npos) return out;
    out += content;
    pos = hit + pattern.size();
  }
}

std::string strip(std::string_view text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  while (left && begin < end) {
    const auto c = decode_utf8(text, begin);
    if (!c.valid || !is_whitespace(c.code_point)) break;
    begin += c.length;
  }
  while (right && end > begin) {
    const auto c = decode_utf8_before(text, end, begin);
    if (!c.valid || !is_whitespace(c.code_point)) break;
    end -= c.length;
  }
  return std::string(text.substr(begin, end - begin));
}

} // namespace

std::string normalize(std::string_view text, const std::vector<normalizer_step>& steps) {
  std::string s(text);
  for (const auto& step : steps) {
    using k = normalizer_step::kind;
    switch (step.what) {
    case k::nfc: s = map_with(s, UTF8PROC_COMPOSE); break;
    case k::nfd: s = map_with(s, UTF8PROC_DECOMPOSE); break;
    case k::nfkc: s = map_with(s, UTF8PROC_COMPOSE | UTF8PROC_COMPAT); break;
    case k::nfkd: s = map_with(s, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); break;
    case k::lowercase: s = lowercase(s); break;
    case k::replace: s = replace_all(s, step.pattern, step.content); break;
    case k::prepend:
      if (!s.empty()) s.insert(0, step.content);
      break;
    case k::strip: s = strip(s, step.left, step.right); break;
    }
  }
  return s;
}

} // namespace kvactor::model
