#pragma once
// GBNF, the grammar notation llama.cpp's users write, as a grammar:
//
//   root   ::= answer (", " answer)*      # comments run to the line's end
//   answer ::= "yes" | "no" | [0-9]{1,3} | "\"" [^"\\]* "\""
//
// Rules `name ::= alternatives` (names of letters, digits, '-' and '_'; a
// definition runs to the next `name ::=`), literals "..." and classes
// [...] / [^...] with escapes (\n \r \t \\ \" \] \xHH \uHHHH \UHHHHHHHH),
// `.` (any character), groups ( ), and the postfix * + ? {m} {m,} {m,n}.
// Characters are Unicode code points (the text is UTF-8). The start is
// `root`. Errors name the line and column.

#include "base/result.hpp"
#include "model/grammar/grammar.hpp"

#include <string_view>

namespace kvactor::model {

result<grammar> parse_gbnf(std::string_view text);

} // namespace kvactor::model
