#include "model/tokenizer/regex_split.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace kvactor::model {

namespace {

constexpr std::string_view behavior_names[] = {"Isolated", "Removed", "MergedWithPrevious",
                                               "MergedWithNext", "Contiguous"};

// [begin, end) of the text, and whether it is a match (after `invert`).
struct segment {
  size_t begin, end;
  bool match;
};

// The segments as the behavior joins or drops them.
std::vector<segment> by_behavior(const std::vector<segment>& all, split_behavior b) {
  std::vector<segment> out;
  bool previous_match = false;
  switch (b) {
  case split_behavior::isolated:
    return all;
  case split_behavior::removed:
    for (const auto& s : all)
      if (!s.match)
        out.push_back(s);
    return out;
  case split_behavior::merged_with_previous:
    for (const auto& s : all) {
      if (s.match && !previous_match && !out.empty())
        out.back().end = s.end;
      else
        out.push_back(s);
      previous_match = s.match;
    }
    return out;
  case split_behavior::merged_with_next:
    for (auto s = all.rbegin(); s != all.rend(); ++s) {
      if (s->match && !previous_match && !out.empty())
        out.back().begin = s->begin;
      else
        out.push_back(*s);
      previous_match = s->match;
    }
    return {out.rbegin(), out.rend()};
  case split_behavior::contiguous:
    for (size_t i = 0; i < all.size(); ++i) {
      if (i > 0 && all[i].match == all[i - 1].match)
        out.back().end = all[i].end;
      else
        out.push_back(all[i]);
    }
    return out;
  }
  return out;
}

} // namespace

std::optional<split_behavior> split_behavior_of(std::string_view name) {
  for (size_t i = 0; i < std::size(behavior_names); ++i)
    if (behavior_names[i] == name)
      return static_cast<split_behavior>(i);
  return std::nullopt;
}

std::string_view split_behavior_name(split_behavior b) {
  return behavior_names[static_cast<size_t>(b)];
}

struct regex_split::code {
  explicit code(pcre2_code* c) : compiled(c) {}
  ~code() { pcre2_code_free(compiled); }
  code(const code&) = delete;
  code& operator=(const code&) = delete;

  pcre2_code* compiled;
};

result<regex_split> regex_split::compile(std::string_view pattern, options o) {
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  // NOTE: UCP gives \s, \w, \d and [[:classes:]] their Unicode meanings, as
  // the Oniguruma of Hugging Face's tokenizers has them (a literal has none).
  const uint32_t flags =
    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (o.literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                flags, &code_error, &offset, nullptr);
  if (!c) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code_error, message, sizeof message);
    std::string what = "regex '";
    what += pattern;
    what += "' does not compile at offset ";
    what += std::to_string(offset);
    what += ": ";
    what += reinterpret_cast<const char*>(message);
    return error{std::move(what)};
  }
  pcre2_jit_compile(c, PCRE2_JIT_COMPLETE); // without JIT (an error here) it interprets
  return regex_split(std::string(pattern), o, std::make_shared<const code>(c));
}

std::vector<std::string_view> regex_split::split(std::string_view text) const {
  std::vector<segment> all;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
    pcre2_match_data_create_from_pattern(code_->compiled, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  auto stretch = [&](size_t begin, size_t end) {
    if (end > begin)
      all.push_back({begin, end, options_.invert});
  };
  size_t gap = 0; // where the stretch before the next match starts
  for (size_t at = 0; at <= text.size();) {
    const int rc = pcre2_match(code_->compiled, subject, text.size(), at, 0, match.get(), nullptr);
    if (rc < 0) // PCRE2_ERROR_NOMATCH, or a limit: the rest is one stretch
      break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ov[0], end = ov[1];
    stretch(gap, begin);
    gap = begin;
    if (end == begin) { // an empty match ends the stretch; go on one character later
      at = begin + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80)
        ++at;
      continue;
    }
    all.push_back({begin, end, !options_.invert});
    gap = at = end;
  }
  stretch(gap, text.size());
  std::vector<std::string_view> pieces;
  for (const auto& s : by_behavior(all, options_.behavior))
    pieces.push_back(text.substr(s.begin, s.end - s.begin));
  return pieces;
}

} // namespace kvactor::model
