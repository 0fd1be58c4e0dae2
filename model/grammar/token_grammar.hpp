#pragma once
// token_grammar: a grammar bound to a model's vocabulary — the masks of the
// tokens each state allows, cached by the state's content, so that every
// sequence under the same constraint shares them: a mask is made once per
// distinct state, then looked up. token_matcher is one sequence's place in
// it.
//
// Most of a mask does not depend on the stacks below a state's tops. The
// first time a byte-class slot is a top, its tokens are split by walking
// the sorted vocabulary as a trie (token_vocabulary.hpp) from the slot
// alone: those it accepts within its own rule (accepted whatever lies
// below), those it refuses before its rule could end (refused), and the
// undecided rest, whose bytes go on past the rule's end. A new state's mask
// is then its tops' accepted tokens plus its undecided ones walked from the
// whole state: for a JSON string's characters, the few tokens with a quote.
// Splits are shared by every state, so a grammar walks the vocabulary once
// per slot it reaches, not once per state. They are made when first needed:
// binding every slot of a large schema up front walked it for seconds.
// A walk keeps each state it reaches once, with the moves made from it, so
// the many prefixes that reach one state (runs of a string's characters)
// step a byte from it once.
//
// Thread-safe: rows of a step ask for masks in parallel.

#include "model/grammar/grammar_matcher.hpp"
#include "model/grammar/token_vocabulary.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvactor::model {

// Which tokens may come next: bit `id` of `bits`.
struct token_mask {
  std::vector<uint64_t> bits;
  bool allows(token_id id) const { return (bits[size_t(id) >> 6] >> (size_t(id) & 63)) & 1; }
  size_t count() const;
};

// Sets the logit of every token `mask` refuses to -infinity.
void apply_mask(std::span<float> logits, const token_mask& mask);

// One byte-class slot's tokens, split as above.
struct top_split {
  token_mask accepted_bits;           // the accepted tokens as a mask when many,
  std::vector<token_id> accepted_ids; // else as a list
  std::vector<uint32_t> undecided;    // positions in the vocabulary's sorted order, ascending
  // Kept empty: over an eighth of the vocabulary undecided (a state with this
  // top walks the vocabulary whole, which is then cheaper), or over the
  // grammar's budget for splits.
  bool whole = false;
  size_t bytes() const;
  bool accepts(token_id t) const;
  // Allows the accepted tokens in `mask`.
  void accept_into(token_mask& mask) const;
};

// What a token_grammar keeps.
struct token_grammar_limits {
  // Bytes of masks (then masks are walked), and as many of splits.
  size_t max_cached_bytes = size_t{16} << 20;
  // false: every new state's mask walks the whole vocabulary (walk_all), as
  // kvactor-bench-grammar --no-splits measures.
  bool split_tops = true;
  // States one walk keeps with their moves, 1 KiB each (then it starts
  // again from the current token's path).
  size_t max_walk_states = 4096;
};

class token_grammar {
public:
  token_grammar(std::shared_ptr<const grammar> g, std::shared_ptr<const token_vocabulary> v,
                token_grammar_limits limits = {});

  const std::shared_ptr<const grammar>& rules() const { return grammar_; }
  const token_vocabulary& vocabulary() const { return *vocab_; }
  // The mask of `m`'s current state (m a matcher of this grammar; its node
  // pool serves the walk and is left as it was).
  std::shared_ptr<const token_mask> mask(grammar_matcher& m) const;
  // The mask of state s, uncached: from its tops' splits.
  token_mask walk(grammar_matcher& m, const grammar_matcher::state& s) const;
  // The same mask from every token walked from the whole state (what the
  // splits save; kept to check them against).
  token_mask walk_all(grammar_matcher& m, const grammar_matcher::state& s) const;
  // Slot `slot`'s split (a byte-class slot of the grammar; m a matcher of
  // it, whose node pool serves the walk).
  std::shared_ptr<const top_split> split(grammar_matcher& m, uint32_t slot) const;

  int64_t num_walks() const { return num_walks_; }
  int64_t num_hits() const { return num_hits_; }

private:
  std::shared_ptr<const grammar> grammar_;
  std::shared_ptr<const token_vocabulary> vocab_;
  token_grammar_limits limits_;
  mutable std::vector<std::shared_ptr<const top_split>> splits_; // by slot, once made (mutex_)
  mutable size_t split_bytes_ = 0;                                // (mutex_)
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const token_mask>> cache_;
  mutable std::atomic<int64_t> num_walks_{0}, num_hits_{0};
};

// One sequence's place in a token_grammar.
class token_matcher {
public:
  explicit token_matcher(std::shared_ptr<const token_grammar> g);

  std::shared_ptr<const token_mask> mask() { return grammar_->mask(matcher_); }
  // Moves past token `t`: false (and no move) when the grammar refuses it.
  // An end token is accepted where the grammar can end.
  bool accept(token_id t);
  // Nothing may follow the tokens so far but the end.
  bool must_end() const { return matcher_.must_end(); }
  bool can_end() const { return matcher_.can_end(); }

private:
  std::shared_ptr<const token_grammar> grammar_;
  grammar_matcher matcher_;
};

} // namespace kvactor::model
