#include "model/tokenizer/metaspace.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using pieces = std::vector<std::string>;
const std::string m = "\u2581";

metaspace with(metaspace::prepend scheme, bool split = true) {
  metaspace ms;
  ms.prepend_scheme = scheme;
  ms.split = split;
  return ms;
}

TEST(metaspace, splits_before_each_replacement) {
  const auto always = with(metaspace::prepend::always);
  EXPECT_EQ(always.pre_tokenize("Hello world", true), (pieces{m + "Hello", m + "world"}));
  // A run of spaces: one piece per space, the last joined to the word.
  EXPECT_EQ(always.pre_tokenize("a   b", true), (pieces{m + "a", m, m, m + "b"}));
  // Text that begins with a space gets no second replacement.
  EXPECT_EQ(always.pre_tokenize(" x", true), (pieces{m + "x"}));
  EXPECT_EQ(with(metaspace::prepend::always, false).pre_tokenize("a b", true),
            (pieces{m + "a" + m + "b"}));
}

TEST(metaspace, prepends_as_its_scheme_says) {
  EXPECT_EQ(with(metaspace::prepend::always).pre_tokenize("x", false), (pieces{m + "x"}));
  EXPECT_EQ(with(metaspace::prepend::first).pre_tokenize("x", true), (pieces{m + "x"}));
  EXPECT_EQ(with(metaspace::prepend::first).pre_tokenize("x", false), (pieces{"x"}));
  EXPECT_EQ(with(metaspace::prepend::never).pre_tokenize("x y", true), (pieces{"x", m + "y"}));
}

} // namespace
} // namespace kvactor::model
