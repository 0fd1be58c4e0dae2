#include "model/tokenizer/decoder.hpp"

#include <optional>

#include "base/utf8.hpp"
#include "model/tokenizer/byte_level.hpp"

namespace kvactor::model {
namespace {

using kind = decoder_step::kind;

std::string_view name_of(kind k) {
  switch (k) {
  case kind::byte_level: return "ByteLevel";
  case kind::byte_fallback: return "ByteFallback";
  case kind::replace: return "Replace";
  case kind::strip: return "Strip";
  case kind::metaspace: return "Metaspace";
  case kind::fuse: return "Fuse";
  }
  return "?";
}

std::string replace_all(std::string_view s, std::string_view pattern, std::string_view content) {
  std::string out;
  for (std::size_t pos = 0;;) {
    const auto hit = pattern.empty() ? s.npos : s.find(pattern, pos);
    out += s.substr(pos, hit - pos);
    if (hit == s.npos) return out;
    out += content;
    pos = hit + pattern.size();
  }
}

// "<0x0A>" -> '\n'; anything else is not a byte token.
std::optional<char> byte_token(std::string_view s) {
  if (s.size() != 6 || !s.starts_with("<0x") || s[5] != '>') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(s[3]), lo = hex(s[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<char>(hi * 16 + lo);
}

std::string strip(std::string_view s, std::string_view c, int start, int stop) {
  for (int i = 0; i < start && !c.empty() && s.starts_with(c); ++i) s.remove_prefix(c.size());
  for (int i = 0; i < stop && !c.empty() && s.ends_with(c); ++i) s.remove_suffix(c.size());
  return std::string(s);
}

} // namespace

result<token_decoder> token_decoder::make(std::vector<decoder_step> steps,
                                          std::string_view where) {
  token_decoder d;
  bool fused = false;
  for (auto& step : steps) {
    if (step.what == kind::fuse) {
      fused = true;
      continue;
    }
    const bool one_char_replace =
      step.what == kind::replace && decode_utf8(step.pattern, 0).valid &&
      decode_utf8(step.pattern, 0).length == step.pattern.size();
    if (fused && step.what == kind::strip) {
      d.whole_.push_back(std::move(step));
    } else if (!fused || one_char_replace) {
      d.first_differs_ |= step.what == kind::metaspace &&
                          step.prepend_scheme != metaspace::prepend::never;
      d.per_token_.push_back(std::move(step));
    } else {
      return error_in(where, "key 'decoder': " + std::string(name_of(step.what)) +
                                 " after Fuse is not supported");
    }
  }
  return d;
}

std::string token_decoder::token_text(std::string_view token, bool first) const {
  std::string s(token);
  for (const auto& step : per_token_) {
    switch (step.what) {
    case kind::byte_level:
      // A string outside the byte alphabet stays as it is.
      if (auto raw = symbols_to_bytes(s)) s = std::move(*raw);
      break;
    case kind::byte_fallback:
      if (auto b = byte_token(s)) s = std::string(1, *b);
      break;
    case kind::replace: s = replace_all(s, step.pattern, step.content); break;
    case kind::strip: s = strip(s, step.content, step.start, step.stop); break;
    case kind::metaspace:
      // The first token's replacement characters stand for the prepended space.
      s = replace_all(s, step.replacement,
                      first && step.prepend_scheme != metaspace::prepend::never ? "" : " ");
      break;
    case kind::fuse: break;
    }
  }
  return s;
}

void token_decoder::finish(std::string& text) const {
  for (const auto& step : whole_) text = strip(text, step.content, step.start, step.stop);
}

} // namespace kvactor::model
