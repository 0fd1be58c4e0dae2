#pragma once
// grammar_matcher: where a byte string stands in a grammar — the set of
// parse stacks (a pushdown automaton's configurations) after the bytes so
// far. Each stack is a chain of nodes (slot, parent): its top a byte class
// to match next, below it the slots to go on at once a rule ends. Nodes are
// hash-consed, so equal stacks are one node and the set stays small however
// ambiguous the grammar; a reference that ends its alternative is a tail
// call (no node), so repetitions do not grow the stacks.
//
//   "[1,[2" in  value ::= num | "[" value ("," value)* "]"
//   tops: { [0-9] of num  <- rest of the inner list <- rest of the outer list }

#include "model/grammar/grammar.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvactor::model {

class grammar_matcher {
public:
  struct state {
    std::vector<int32_t> tops; // stack nodes whose top slot is a byte class, sorted
    bool complete = false;     // some parse has ended: the bytes so far are a whole sentence
    bool dead() const { return tops.empty() && !complete; }
  };

  explicit grammar_matcher(std::shared_ptr<const grammar> g);

  const grammar& rules() const { return *g_; }
  const state& current() const { return state_; }
  // Whether the bytes so far are a sentence of the grammar, and whether
  // nothing may follow them.
  bool can_end() const { return state_.complete; }
  bool must_end() const { return state_.complete && state_.tops.empty(); }
  // Moves past `bytes`; false (and no move) when the grammar rejects them.
  bool advance(std::string_view bytes);

  // For masks (token_grammar.hpp): `to` = `from` after byte b (`to` dead
  // when b is refused; a complete `from` ends there, so `to` is never
  // complete through `from`'s end). Nodes made from here on can be dropped
  // with rollback(mark()).
  void step(const state& from, uint8_t b, state& to);
  size_t mark() const { return nodes_.size(); }
  void rollback(size_t mark);
  // The byte-class slot a top node of a state stands on, and a state that
  // stands there alone: its rule's end completes it, where in a state its
  // stack would go on below.
  uint32_t slot_of(int32_t top) const { return nodes_[size_t(top)].slot; }
  state alone(uint32_t slot);
  // The content of `s` (each stack's slots, sorted), equal for equal
  // states of any two matchers of one grammar.
  std::string key(const state& s) const;

private:
  struct node {
    uint32_t slot;
    int32_t parent; // -1: the bottom
  };
  int32_t intern(uint32_t slot, int32_t parent);
  void expand(uint32_t slot, int32_t parent, state& to);

  std::shared_ptr<const grammar> g_;
  std::vector<node> nodes_;
  std::unordered_map<uint64_t, int32_t> index_; // (slot, parent) -> node
  state state_;
  state scratch_;
};

} // namespace kvactor::model
