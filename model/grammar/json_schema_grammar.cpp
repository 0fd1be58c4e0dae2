#include "model/grammar/json_schema_grammar.hpp"

#include "model/grammar/json_grammar_parts.hpp"
#include "model/grammar/json_schema_compiler.hpp"

#include <simdjson.h>

namespace kvactor::model {

grammar json_object_grammar() {
  grammar_builder b;
  json_grammar_parts parts(b);
  return b.build(parts.object().arg).value();
}

result<grammar> json_schema_grammar(std::string_view schema) {
  const simdjson::padded_string text(schema);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const simdjson::error_code e = parser.parse(text).get(root))
    return schema_error("schema",
                        std::string("not valid JSON (") + simdjson::error_message(e) + ")");
  grammar_builder b;
  json_schema_compiler compiler(b, root);
  result<grammar_element> top = compiler.reference("#", "schema");
  if (!top) return top.error();
  result<grammar> g = b.build(top->arg);
  if (!g) return schema_error("schema", g.error().message);
  return g;
}

} // namespace kvactor::model
