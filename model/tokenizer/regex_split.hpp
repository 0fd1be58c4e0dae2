#pragma once
// regex_split: a tokenizer.json Split pre-tokenizer whose pattern is not one
// of those pretokenizer.hpp scans by hand: a regex (Mistral Nemo's,
// DeepSeek V3's, ...) or a literal string (Gemma's), run by PCRE2 (Debian's
// libpcre2-dev) in UTF mode with Unicode properties (\p{L}, \s as Unicode
// white space), JIT-compiled where the CPU allows. Bytes that are not UTF-8
// never match (they stay in the stretches between matches).
//
// The text falls into matches and the stretches between them (an empty
// match only ends a stretch); `invert` swaps the two. Then, by behavior:
//   isolated              every match and every stretch a piece
//   removed               the stretches only
//   merged_with_previous  a match joins the stretch before it
//   merged_with_next      a match joins the stretch after it
//   contiguous            runs of matches (or of stretches) one piece

#include "base/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

enum class split_behavior : uint8_t {
  isolated,
  removed,
  merged_with_previous,
  merged_with_next,
  contiguous
};

// tokenizer.json's names: "Isolated", "Removed", "MergedWithPrevious", ...
std::optional<split_behavior> split_behavior_of(std::string_view name);
std::string_view split_behavior_name(split_behavior b);

class regex_split {
public:
  struct options {
    bool literal = false; // the pattern is a string to find, not a regex
    split_behavior behavior = split_behavior::isolated;
    bool invert = false;
  };

  // An error names the regex and PCRE2's message with its offset.
  static result<regex_split> compile(std::string_view pattern, options o);
  static result<regex_split> compile(std::string_view pattern) { return compile(pattern, {}); }

  const std::string& pattern() const { return pattern_; }
  const options& settings() const { return options_; }
  // The pieces of `text`, in order.
  std::vector<std::string_view> split(std::string_view text) const;

private:
  struct code;
  regex_split(std::string pattern, options o, std::shared_ptr<const code> c)
    : pattern_(std::move(pattern)), options_(o), code_(std::move(c)) {}

  std::string pattern_;
  options options_;
  std::shared_ptr<const code> code_; // shared by copies; matching does not change it
};

} // namespace kvactor::model
