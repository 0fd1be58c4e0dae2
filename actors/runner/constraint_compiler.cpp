#include "actors/runner/constraint_compiler.hpp"

#include "base/assert.hpp"
#include "model/grammar/gbnf.hpp"
#include "model/grammar/json_schema_grammar.hpp"
#include "model/grammar/regex_grammar.hpp"
#include "model/grammar/tool_call_grammar.hpp"

namespace kvactor {

namespace {

std::string key_of(const output_constraint& c) {
  std::string key(1, static_cast<char>(c.kind));
  key += c.text;
  for (const std::string& choice : c.choices) {
    key += '\0';
    key += choice;
  }
  return key;
}

result<model::grammar> choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) return error_in("choice", "needs at least one string");
  model::grammar_builder b;
  std::vector<model::grammar_sequence> alternatives;
  for (const std::string& c : choices) {
    if (c.empty()) return error_in("choice", "an empty string cannot be generated");
    alternatives.push_back(b.literal(c));
  }
  const uint32_t root = b.rule("root");
  b.define(root, std::move(alternatives));
  return b.build(root);
}

} // namespace

result<model::grammar> grammar_of(const output_constraint& c) {
  switch (c.kind) {
  case constraint_kind::json_object: return model::json_object_grammar();
  case constraint_kind::json_schema: return model::json_schema_grammar(c.text);
  case constraint_kind::regex: return model::regex_grammar(c.text);
  case constraint_kind::choice: return choice_grammar(c.choices);
  case constraint_kind::grammar: return model::parse_gbnf(c.text);
  case constraint_kind::tool_calls: return model::tool_call_grammar_of_spec(c.text);
  case constraint_kind::none: break;
  }
  KVACTOR_ASSERT(false, "an empty constraint compiled");
  return error_in("constraint", "none");
}

constraint_compiler::constraint_compiler(std::shared_ptr<const model::token_vocabulary> vocab,
                                         size_t max_grammars)
  : vocab_(std::move(vocab)), max_grammars_(max_grammars) {}

result<std::shared_ptr<const model::token_grammar>>
constraint_compiler::compile(const output_constraint& c) {
  std::string key = key_of(c);
  {
    std::lock_guard lock(mutex_);
    if (auto at = by_key_.find(key); at != by_key_.end()) {
      recent_.splice(recent_.begin(), recent_, at->second);
      return at->second->second;
    }
  }
  // NOTE: compiled outside the lock; two requests racing on one new
  // constraint both compile it and the second keeps the first's.
  auto g = grammar_of(c);
  if (!g) return g.error();
  auto compiled = std::make_shared<const model::token_grammar>(
    std::make_shared<const model::grammar>(std::move(*g)), vocab_);
  std::lock_guard lock(mutex_);
  if (auto at = by_key_.find(key); at != by_key_.end()) return at->second->second;
  ++num_compiled_;
  recent_.emplace_front(key, compiled);
  by_key_.emplace(std::move(key), recent_.begin());
  if (recent_.size() > max_grammars_) {
    by_key_.erase(recent_.back().first);
    recent_.pop_back();
  }
  return std::shared_ptr<const model::token_grammar>(std::move(compiled));
}

int64_t constraint_compiler::num_compiled() const {
  std::lock_guard lock(mutex_);
  return num_compiled_;
}

} // namespace kvactor
