#pragma once
// regex_split: a tokenizer.json Split pre-tokenizer whose regex is not one
// of the patterns pretokenizer.hpp scans by hand (Mistral Nemo's, DeepSeek
// V3's, ...), run by PCRE2 (Debian's libpcre2-dev) in UTF mode with Unicode
// properties (\p{L}, \s as Unicode white space), JIT-compiled where the CPU
// allows. Behavior "Isolated": every match is a piece, and so is every
// stretch between matches. Bytes that are not UTF-8 never match (they stay
// in the stretches between).

#include "base/result.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::model {

class regex_split {
public:
  // An error names the regex and PCRE2's message with its offset.
  static result<regex_split> compile(std::string_view regex);

  const std::string& regex() const { return regex_; }
  // Consecutive pieces that cover `text` exactly.
  std::vector<std::string_view> split(std::string_view text) const;

private:
  struct code;
  regex_split(std::string regex, std::shared_ptr<const code> c)
    : regex_(std::move(regex)), code_(std::move(c)) {}

  std::string regex_;
  std::shared_ptr<const code> code_; // shared by copies; matching does not change it
};

} // namespace kvactor::model
