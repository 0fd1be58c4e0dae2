#pragma once
// format_rules: what a quick check can hold every source file to, beside
// .clang-format (which formats but cannot check this tree: clang-format 14
// breaks `self->request(...).then(...)` chains as `self\n->request`).
//
//   - lines of at most 100 characters (UTF-8 code points)
//   - no tab and no trailing blank
// The lines of raw string literals are data (JSON, templates, a corpus) and
// exempt from all of them.
//   - comments with //, never /// (one comment style)
//   - int32_t and friends without std:: (one integer-type style)

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
