#pragma once
// constraint_compiler: output constraints (kvactor/constraint.hpp) compiled
// into grammars bound to the model's vocabulary, kept by the constraint, so
// that requests under one schema share its grammar and its cached masks.
// The request actor compiles a request's constraint when it admits it (a
// refusal names the construct); the runner looks it up for the sequence's
// first step. Thread-safe.

#include "actors/core/types.hpp"
#include "base/result.hpp"
#include "kvactor/constraint.hpp"
#include "model/grammar/token_grammar.hpp"

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kvactor {

class constraint_compiler {
public:
  // Keeps the `max_grammars` last used.
  explicit constraint_compiler(std::shared_ptr<const model::token_vocabulary> vocab,
                               size_t max_grammars = 64);

  // The constraint's grammar, or why it cannot be built (naming the
  // construct). `c` must not be empty.
  result<std::shared_ptr<const model::token_grammar>> compile(const output_constraint& c);

  int64_t num_compiled() const;

private:
  std::shared_ptr<const model::token_vocabulary> vocab_;
  size_t max_grammars_;
  mutable std::mutex mutex_;
  using entry = std::pair<std::string, std::shared_ptr<const model::token_grammar>>;
  std::list<entry> recent_; // most recently used first
  std::unordered_map<std::string, std::list<entry>::iterator> by_key_;
  int64_t num_compiled_ = 0;
};

// The grammar a constraint stands for, before any vocabulary.
result<model::grammar> grammar_of(const output_constraint& c);

} // namespace kvactor
