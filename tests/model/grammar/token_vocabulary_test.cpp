// The vocabulary as a trie: byte order, shared prefixes, and where a
// prefix's tokens end (token_vocabulary.hpp).

#include "model/grammar/token_vocabulary.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kvactor::model {
namespace {

// Random strings over a small alphabet (so prefixes are shared), a few over
// 255 bytes with long common prefixes, and empty (special) ids.
std::vector<std::string> random_pieces(std::mt19937_64& rng) {
  std::vector<std::string> pieces;
  for (int i = 0; i < 3000; ++i) {
    std::string s(1 + rng() % 7, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 3);
    pieces.push_back(s);
  }
  const std::string long_stem(300, 'b');
  for (int i = 0; i < 20; ++i) pieces.push_back(long_stem + std::string(1 + rng() % 4, 'c'));
  pieces.emplace_back();
  return pieces;
}

TEST(token_vocabulary, sorts_tokens_by_bytes_with_their_shared_prefixes) {
  std::mt19937_64 rng(5);
  const std::vector<std::string> pieces = random_pieces(rng);
  const token_vocabulary v(pieces, {}, pieces.size());
  const std::vector<token_id>& sorted = v.sorted();
  ASSERT_EQ(sorted.size(), pieces.size() - 1); // not the empty one
  for (size_t k = 1; k < sorted.size(); ++k) {
    const std::string& a = v.bytes(sorted[k - 1]);
    const std::string& b = v.bytes(sorted[k]);
    ASSERT_LE(a, b);
    size_t shared = 0;
    while (shared < a.size() && shared < b.size() && a[shared] == b[shared]) ++shared;
    ASSERT_EQ(v.shared_prefix()[k], shared) << k;
  }
}

TEST(token_vocabulary, prefix_end_is_where_a_prefix_s_tokens_end) {
  std::mt19937_64 rng(9);
  const std::vector<std::string> pieces = random_pieces(rng);
  const token_vocabulary v(pieces, {}, pieces.size());
  const std::vector<token_id>& sorted = v.sorted();
  for (size_t k = 0; k < sorted.size(); ++k) {
    const std::string& b = v.bytes(sorted[k]);
    for (size_t d : {size_t{0}, size_t{1}, b.size() / 2, b.size()}) {
      size_t expected = k + 1; // one by one: the next token not beginning so
      while (expected < sorted.size() && v.bytes(sorted[expected]).compare(0, d, b, 0, d) == 0)
        ++expected;
      ASSERT_EQ(v.prefix_end(k, d), expected) << "position " << k << ", " << d << " bytes";
    }
  }
}

} // namespace
} // namespace kvactor::model
