#include "model/grammar/token_grammar.hpp"

#include "model/grammar/gbnf.hpp"
#include "grammar_walk.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace kvactor::model {
namespace {

using testing::parse;

// A vocabulary of every 1- and 2-byte string over `alphabet`, random longer
// ones, pieces of multi-byte characters, an empty (special) token and an end.
std::shared_ptr<const token_vocabulary> make_vocabulary(std::string_view alphabet,
                                                        std::mt19937_64& rng, token_id* end) {
  std::set<std::string> pieces;
  for (char a : alphabet) {
    pieces.insert(std::string(1, a));
    for (char b : alphabet) pieces.insert(std::string{a, b});
  }
  for (int i = 0; i < 400; ++i) {
    std::string s;
    const size_t n = 3 + rng() % 6;
    for (size_t k = 0; k < n; ++k) s += alphabet[rng() % alphabet.size()];
    pieces.insert(s);
  }
  for (std::string_view multi : {"é", "\xC3", "\xA9", "日本", "\xE6\x97", "a\xC3"})
    pieces.insert(std::string(multi));
  std::vector<std::string> bytes(pieces.begin(), pieces.end());
  std::shuffle(bytes.begin(), bytes.end(), rng);
  bytes.insert(bytes.begin() + 3, std::string()); // a special token
  *end = static_cast<token_id>(bytes.size());
  bytes.emplace_back(); // the end token: no bytes of its own
  return std::make_shared<const token_vocabulary>(std::move(bytes), std::vector<token_id>{*end},
                                                  bytes.size() + 5); // padded logits rows
}

// Token by token: whether `m`, moved past the token's bytes, is still alive.
std::vector<bool> brute_force(const grammar_matcher& m, const token_vocabulary& v, token_id end) {
  std::vector<bool> allowed(v.vocab_size(), false);
  for (size_t id = 0; id < v.num_ids(); ++id) {
    if (static_cast<token_id>(id) == end) {
      allowed[id] = m.can_end();
      continue;
    }
    const std::string& b = v.bytes(static_cast<token_id>(id));
    if (b.empty()) continue;
    grammar_matcher copy = m;
    allowed[id] = copy.advance(b);
  }
  return allowed;
}

constexpr std::string_view small_grammars[] = {
  R"(root ::= "{" ( "\"" [a-c]* "\":" [0-9]+ ("," "\"" [a-c]* "\":" [0-9]+)* )? "}")",
  R"(root ::= v  v ::= "[" (v ("," v)*)? "]" | [0-9] | "\"" ([^"\\] | "\\" ["\\])* "\"")",
  R"(root ::= ("ab" | "a" "b"+ | "é" | "日本"){1,5} "!"?)",
  R"(root ::= [a-c]{2,3} ("1" | "12" | "123") [^0-9]* )",
};

TEST(token_grammar, masks_equal_a_token_by_token_check_in_random_states) {
  std::mt19937_64 rng(11);
  token_id end = 0;
  auto vocab = make_vocabulary("{}[]\",:\\0129abc!", rng, &end);
  for (std::string_view text : small_grammars) {
    auto g = parse(text);
    token_grammar tg(g, vocab);
    token_grammar_limits none;
    none.max_cached_bytes = 0; // no bytes for splits: every state walks whole ...
    none.max_walk_states = 1;  // ... and every walk starts its table again at each byte
    token_grammar no_room(g, vocab, none);
    for (int walk = 0; walk < 30; ++walk) {
      grammar_matcher m(g);
      for (int step = 0; step < 25 && !m.must_end(); ++step) {
        const std::vector<bool> expected = brute_force(m, *vocab, end);
        const token_mask mask = tg.walk(m, m.current()); // from the tops' splits
        const token_mask whole = tg.walk_all(m, m.current());
        const token_mask unsplit = no_room.walk(m, m.current());
        std::vector<token_id> choices;
        for (size_t id = 0; id < vocab->vocab_size(); ++id) {
          ASSERT_EQ(mask.allows(static_cast<token_id>(id)), expected[id])
            << text << "\ntoken " << id << " '"
            << (id < vocab->num_ids() ? vocab->bytes(static_cast<token_id>(id)) : "") << "'";
          ASSERT_EQ(whole.allows(static_cast<token_id>(id)), expected[id]) << text << " " << id;
          ASSERT_EQ(unsplit.allows(static_cast<token_id>(id)), expected[id]) << text << " " << id;
          if (expected[id] && static_cast<token_id>(id) != end)
            choices.push_back(static_cast<token_id>(id));
        }
        if (choices.empty()) break;
        ASSERT_TRUE(m.advance(vocab->bytes(choices[rng() % choices.size()])));
      }
    }
  }
}

// A slot's split, from the slot alone: a JSON-like string's character class
// accepts tokens of characters, refuses ones that break the string, and
// leaves undecided the ones that end its run and go on (only the stack
// below can say whether a quote, then a comma or a bracket, may follow).
TEST(token_grammar, a_slot_splits_its_tokens_into_accepted_refused_and_undecided) {
  std::vector<std::string> pieces = {"a", "ab", "a\"", "\"", "\",", "\"]", "\"x", "\\", "]"};
  // Tokens both tops refuse: with them the undecided are few enough to keep
  // (top_split::whole).
  for (int i = 0; i < 60; ++i) pieces.push_back(std::string("z").append(std::to_string(i)));
  auto vocab = std::make_shared<const token_vocabulary>(pieces, std::vector<token_id>{},
                                                        pieces.size());
  auto g = parse(R"(root ::= "[" (s ("," s)*)? "]"  s ::= "\"" [a-b]* "\"")");
  token_grammar tg(g, vocab);
  grammar_matcher m(g);
  ASSERT_TRUE(m.advance("[\"a"));
  // The state's tops: the class [a-b] (its run: one rule) and the closing
  // quote.
  ASSERT_EQ(m.current().tops.size(), 2u);
  std::map<std::string, std::string> kind; // piece -> how its top split it
  for (int32_t top : m.current().tops) {
    const std::shared_ptr<const top_split> split = tg.split(m, m.slot_of(top));
    for (size_t id = 0; id < pieces.size(); ++id)
      if (split->accepts(static_cast<token_id>(id))) kind[pieces[id]] += "A";
    for (uint32_t k : split->undecided) kind[pieces[size_t(vocab->sorted()[k])]] += "U";
  }
  // [a-b] alone: "a", "ab" accepted, "a\"" undecided (its run ends); the
  // quote alone: "\"" accepted (the string ends with it), the rest of the
  // quote's tokens undecided.
  EXPECT_EQ(kind, (std::map<std::string, std::string>{
                    {"a", "A"}, {"ab", "A"}, {"a\"", "U"}, {"\"", "A"},
                    {"\",", "U"}, {"\"]", "U"}, {"\"x", "U"}}));
  // The whole state decides the undecided: a comma or a bracket may follow
  // the string, x not.
  const token_mask mask = tg.walk(m, m.current());
  const std::set<std::string> allowed = {"a", "ab", "a\"", "\"", "\",", "\"]"};
  for (size_t id = 0; id < pieces.size(); ++id)
    EXPECT_EQ(mask.allows(static_cast<token_id>(id)), allowed.contains(pieces[id])) << pieces[id];
}

TEST(token_grammar, masks_are_cached_by_state_across_matchers) {
  std::mt19937_64 rng(3);
  token_id end = 0;
  auto vocab = make_vocabulary("ab01", rng, &end);
  auto tg = std::make_shared<const token_grammar>(parse(R"(root ::= ("a" | "b")+ "0"?)"), vocab);
  token_matcher x(tg), y(tg);
  auto first = x.mask();
  EXPECT_EQ(tg->num_walks(), 1);
  EXPECT_EQ(y.mask(), first); // the same mask object: a hit
  EXPECT_EQ(tg->num_hits(), 1);
  EXPECT_FALSE(first->allows(end));
  token_id a = 0;
  while (vocab->bytes(a) != "a") ++a;
  ASSERT_TRUE(x.accept(a));
  EXPECT_TRUE(x.mask()->allows(end));
  EXPECT_TRUE(x.accept(end)); // the end is accepted where the grammar can end
  EXPECT_FALSE(y.accept(end));
}

TEST(token_grammar, apply_mask_refuses_exactly_the_masked_tokens) {
  token_mask mask;
  mask.bits.assign(3, 0);
  std::vector<float> logits(150, 1.0f);
  for (size_t id : {0, 63, 64, 100, 149}) mask.bits[id / 64] |= uint64_t{1} << (id % 64);
  apply_mask(logits, mask);
  for (size_t id = 0; id < logits.size(); ++id)
    EXPECT_EQ(std::isinf(logits[id]), !mask.allows(static_cast<token_id>(id))) << id;
  EXPECT_EQ(mask.count(), 5u);
}

} // namespace
} // namespace kvactor::model
