#include "model/tokenizer/pretokenizer.hpp"

#include <cstdint>

#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {
namespace {

constexpr std::string_view gpt2_regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view llama3_regex =
  R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view qwen2_regex =
  R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class cls : uint8_t { letter, number, space, other };

// The text decoded once: class, code point and byte offset per character.
struct chars {
  std::vector<uint32_t> cp;
  std::vector<cls> kind;
  std::vector<std::size_t> offset; // size() + 1 entries; the last is text.size()

  explicit chars(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
      const auto c = decode_utf8(text, i);
      cp.push_back(c.code_point);
      kind.push_back(!c.valid                   ? cls::other
                     : is_letter(c.code_point)  ? cls::letter
                     : is_number(c.code_point)  ? cls::number
                     : is_whitespace(c.code_point) ? cls::space
                                                   : cls::other);
      offset.push_back(i);
      i += c.length;
    }
    offset.push_back(text.size());
  }
  std::size_t size() const { return cp.size(); }
  bool is(std::size_t i, cls k) const { return i < size() && kind[i] == k; }
  bool is_newline(std::size_t i) const { return i < size() && (cp[i] == '\r' || cp[i] == '\n'); }
};

uint32_t lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd at i; returns the end or i.
std::size_t match_contraction(const chars& t, std::size_t i, bool ignore_case) {
  if (i >= t.size() || t.cp[i] != '\'') return i;
  auto at = [&](std::size_t k) -> uint32_t {
    if (k >= t.size()) return 0;
    return ignore_case ? lower(t.cp[k]) : t.cp[k];
  };
  const uint32_t a = at(i + 1), b = at(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return i;
}

std::size_t run(const chars& t, std::size_t i, cls k) {
  while (t.is(i, k)) ++i;
  return i;
}

// \s+(?!\S) then \s+, both from i (t.kind[i] is space).
std::size_t match_trailing_space(const chars& t, std::size_t i) {
  const std::size_t j = run(t, i, cls::space);
  // \s+(?!\S): at the end of text the whole run; before a non-space the run
  // minus its last character, which is left to lead the next piece.
  if (j == t.size() || j - 1 > i) return j == t.size() ? j : j - 1;
  return j; // \s+
}

std::size_t next_gpt2(const chars& t, std::size_t i) {
  if (std::size_t e = match_contraction(t, i, false); e != i) return e;
  const std::size_t s = t.cp[i] == ' ' ? i + 1 : i; // optional leading space
  if (t.is(s, cls::letter)) return run(t, s, cls::letter);
  if (t.is(s, cls::number)) return run(t, s, cls::number);
  if (t.is(s, cls::other)) return run(t, s, cls::other);
  return match_trailing_space(t, i);
}

std::size_t next_llama3(const chars& t, std::size_t i, std::size_t max_digits) {
  if (std::size_t e = match_contraction(t, i, true); e != i) return e;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (t.is(i, cls::letter)) return run(t, i, cls::letter);
  if (!t.is(i, cls::number) && !t.is_newline(i) && t.is(i + 1, cls::letter))
    return run(t, i + 1, cls::letter);
  // \p{N}{1,max}
  if (t.is(i, cls::number)) {
    std::size_t e = i;
    while (e - i < max_digits && t.is(e, cls::number)) ++e;
    return e;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const std::size_t s = t.cp[i] == ' ' ? i + 1 : i;
  if (t.is(s, cls::other)) {
    std::size_t e = run(t, s, cls::other);
    while (t.is_newline(e)) ++e;
    return e;
  }
  // \s*[\r\n]+: through the last newline of the whitespace run.
  const std::size_t j = run(t, i, cls::space);
  for (std::size_t k = j; k > i; --k)
    if (t.is_newline(k - 1)) return k;
  return match_trailing_space(t, i);
}

// Digits: a number character alone (or a run of them), or a run of others.
std::size_t next_digits(const chars& t, std::size_t i, bool individual) {
  if (t.is(i, cls::number)) return individual ? i + 1 : run(t, i, cls::number);
  while (i < t.size() && !t.is(i, cls::number)) ++i;
  return i;
}

} // namespace

std::optional<split_pattern> recognise_split_pattern(std::string_view regex) {
  if (regex == gpt2_regex) return split_pattern::gpt2;
  if (regex == llama3_regex) return split_pattern::llama3;
  if (regex == qwen2_regex) return split_pattern::qwen2;
  return std::nullopt;
}

std::string_view split_pattern_regex(split_pattern p) {
  switch (p) {
    case split_pattern::gpt2: return gpt2_regex;
    case split_pattern::llama3: return llama3_regex;
    case split_pattern::qwen2: return qwen2_regex;
    case split_pattern::individual_digits:
    case split_pattern::digit_runs: return {};
  }
  return {};
}

std::vector<std::string_view> pre_split(std::string_view text, split_pattern p) {
  const chars t(text);
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < t.size();) {
    std::size_t e = 0;
    switch (p) {
      case split_pattern::gpt2: e = next_gpt2(t, i); break;
      case split_pattern::llama3: e = next_llama3(t, i, 3); break;
      case split_pattern::qwen2: e = next_llama3(t, i, 1); break;
      case split_pattern::individual_digits: e = next_digits(t, i, true); break;
      case split_pattern::digit_runs: e = next_digits(t, i, false); break;
    }
    // NOTE: every character is a letter, number, space or other, and each
    // class has an alternative that matches it, so progress is guaranteed.
    if (e <= i) e = i + 1;
    pieces.push_back(text.substr(t.offset[i], t.offset[e] - t.offset[i]));
    i = e;
  }
  return pieces;
}

} // namespace kvactor::model
