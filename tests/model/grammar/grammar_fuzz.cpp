// libFuzzer target for the constraint compilers a client's request reaches
// (response_format's JSON Schema, a regex, a GBNF grammar, a tool-call
// spec): any text must give a grammar or an error with a message (never a
// crash, undefined behaviour or a runaway), and a walk through a grammar,
// up to 64 bytes each the first it takes in an order the input shifts,
// must never reach a state that no byte leaves and where the text cannot
// end. (That no rule the root reaches matches nothing finite is
// grammar_builder::build's check, tested in gbnf_test.cpp.)

#include "model/grammar/gbnf.hpp"
#include "model/grammar/grammar_matcher.hpp"
#include "model/grammar/json_schema_grammar.hpp"
#include "model/grammar/regex_grammar.hpp"
#include "model/grammar/tool_call_grammar.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace kvactor::model;

namespace {

[[noreturn]] void fail(const char* compiler, std::string_view text, const char* what) {
  std::fprintf(stderr, "grammar_fuzz: %s of '%.*s': %s\n", compiler, static_cast<int>(text.size()),
               text.data(), what);
  std::abort();
}

// Up to 64 bytes, each the first the grammar takes in an order that
// `salt` shifts.
void walk(const char* compiler, std::string_view text, grammar g, unsigned salt) {
  grammar_matcher m(std::make_shared<const grammar>(std::move(g)));
  for (unsigned step = 0; step < 64 && !m.must_end(); ++step) {
    bool moved = false;
    for (unsigned k = 0; k < 256 && !moved; ++k) {
      const char b = static_cast<char>((salt + 37 * k + step) & 0xff);
      moved = m.advance(std::string_view(&b, 1));
    }
    if (!moved) {
      if (!m.can_end()) fail(compiler, text, "a state no byte leaves and no text ends in");
      return;
    }
  }
}

void compile(const char* compiler, std::string_view text, kvactor::result<grammar> g) {
  if (!g) {
    if (g.error().message.empty()) fail(compiler, text, "an error without a message");
    return;
  }
  walk(compiler, text, std::move(*g), static_cast<unsigned>(text.size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  compile("json_schema_grammar", text, json_schema_grammar(text));
  compile("regex_grammar", text, regex_grammar(text));
  compile("parse_gbnf", text, parse_gbnf(text));
  compile("tool_call_grammar_of_spec", text, tool_call_grammar_of_spec(text));
  return 0;
}
