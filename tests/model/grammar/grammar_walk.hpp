#pragma once
// Random sentences of a grammar, for differential tests: a walk that picks
// each next byte at random among those the matcher allows, stops at random
// where the grammar may end, and past `budget` bytes takes the shortest way
// to an end (a breadth-first search over the matcher's states).

#include "model/grammar/gbnf.hpp"
#include "model/grammar/grammar_matcher.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kvactor::model::testing {

// A GBNF grammar the test writes (a failure, naming the fault, if refused).
inline std::shared_ptr<const grammar> parse(std::string_view text) {
  auto g = parse_gbnf(text);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().message);
  return std::make_shared<const grammar>(std::move(*g));
}

// The bytes `s` allows next.
inline std::vector<uint8_t> allowed_bytes(grammar_matcher& m, const grammar_matcher::state& s) {
  std::vector<uint8_t> out;
  grammar_matcher::state next;
  for (int b = 0; b < 256; ++b) {
    m.step(s, static_cast<uint8_t>(b), next);
    if (!next.dead()) out.push_back(static_cast<uint8_t>(b));
  }
  return out;
}

// The shortest bytes that take `m` from where it is to a complete state
// (nullopt: none within max_depth).
inline std::optional<std::string> shortest_ending(grammar_matcher m, int max_depth = 4096) {
  if (m.can_end()) return std::string();
  struct visit {
    grammar_matcher::state s;
    std::string path;
  };
  std::deque<visit> queue{{m.current(), {}}};
  std::map<std::string, bool> seen{{m.key(m.current()), true}};
  while (!queue.empty()) {
    visit v = std::move(queue.front());
    queue.pop_front();
    if (static_cast<int>(v.path.size()) >= max_depth) continue;
    grammar_matcher::state next;
    for (int b = 0; b < 256; ++b) {
      m.step(v.s, static_cast<uint8_t>(b), next);
      if (next.dead()) continue;
      std::string path = v.path + static_cast<char>(b);
      if (next.complete) return path;
      if (seen.emplace(m.key(next), true).second) queue.push_back({next, std::move(path)});
    }
  }
  return std::nullopt;
}

// A random sentence of `g`'s language that begins with `prefix` (nullopt:
// the grammar refuses the prefix, or the walk found no end).
inline std::optional<std::string> random_sentence(std::shared_ptr<const grammar> g,
                                                  std::mt19937_64& rng, size_t budget = 200,
                                                  double stop_chance = 0.3,
                                                  std::string_view prefix = {}) {
  grammar_matcher m(std::move(g));
  if (!m.advance(prefix)) return std::nullopt;
  std::string out(prefix);
  while (out.size() < budget) {
    if (m.can_end() && (m.must_end() || std::bernoulli_distribution(stop_chance)(rng))) return out;
    const std::vector<uint8_t> next = allowed_bytes(m, m.current());
    if (next.empty()) return std::nullopt;
    const uint8_t b = next[std::uniform_int_distribution<size_t>(0, next.size() - 1)(rng)];
    const char c = static_cast<char>(b);
    if (!m.advance(std::string_view(&c, 1))) return std::nullopt;
    out += c;
  }
  auto rest = shortest_ending(m);
  if (!rest) return std::nullopt;
  return out + *rest;
}

// Whether `g` accepts exactly `text`.
inline bool accepts(std::shared_ptr<const grammar> g, std::string_view text) {
  grammar_matcher m(std::move(g));
  return m.advance(text) && m.can_end();
}

} // namespace kvactor::model::testing
