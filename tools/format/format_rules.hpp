#pragma once
// format_rules: what a quick check can hold every source file to, beside
// .clang-format (which formats but cannot check this tree: clang-format 14
// breaks `self->request(...).then(...)` chains as `self\n->request`).
//
//   - lines of at most 100 characters (UTF-8 code points)
//   - no tab and no trailing blank
//   - comments with //, never /// (one comment style)
//   - int8_t to uint64_t without std:: (one integer-type style)
// A line that holds text of a raw string literal is data (JSON, a template,
// a corpus) and exempt from every rule, the code around the literal too.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor::tools {

inline constexpr int32_t max_line_columns = 100;

struct format_issue {
  int32_t line = 0; // 1-based
  std::string what;
};

// The issues of one source file's text, in line order.
std::vector<format_issue> check_format(std::string_view text);

} // namespace kvactor::tools
