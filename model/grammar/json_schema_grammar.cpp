#include "model/grammar/json_schema_grammar.hpp"

#include "model/grammar/json_grammar_parts.hpp"
#include "model/grammar/json_schema_compiler.hpp"

#include <simdjson.h>

#include <optional>

namespace kvactor::model {

namespace {

// The first rule of `g` that matches no finite text (nullopt: none). A
// schema can ask for such a thing ("node": a required node, for ever); a
// model under it would write without end.
std::optional<uint32_t> endless_rule(const grammar& g) {
  std::vector<bool> ends(g.alternatives.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.alternatives.size(); ++r) {
      if (ends[r]) continue;
      for (uint32_t slot : g.alternatives[r]) {
        bool ok = true;
        for (; g.slots[slot].kind != slot_kind::end && ok; ++slot)
          ok = g.slots[slot].kind == slot_kind::bytes || ends[g.slots[slot].arg];
        if (ok) {
          ends[r] = changed = true;
          break;
        }
      }
    }
  }
  for (size_t r = 0; r < ends.size(); ++r)
    if (!ends[r]) return static_cast<uint32_t>(r);
  return std::nullopt;
}

} // namespace

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
  if (const std::optional<uint32_t> r = endless_rule(*g))
    return schema_error("schema", "accepts no finite JSON text (rule '" + g->names[*r] +
                                    "' matches nothing finite)");
  return g;
}

} // namespace kvactor::model
