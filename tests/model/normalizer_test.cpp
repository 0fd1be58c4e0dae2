#include "model/tokenizer/normalizer.hpp"

#include <gtest/gtest.h>

namespace kvactor::model {
namespace {

using k = normalizer_step::kind;

normalizer_step step(k what) {
  normalizer_step s;
  s.what = what;
  return s;
}

TEST(normalizer, unicode_forms_compose_and_decompose) {
  const std::string decomposed = "cafe\u0301", composed = "caf\u00e9";
  EXPECT_EQ(normalize(decomposed, {step(k::nfc)}), composed);
  EXPECT_EQ(normalize(composed, {step(k::nfd)}), decomposed);
  // Compatibility forms fold only under NFKC / NFKD.
  EXPECT_EQ(normalize("\ufb01 \uff21\u2460", {step(k::nfc)}), "\ufb01 \uff21\u2460");
  EXPECT_EQ(normalize("\ufb01 \uff21\u2460", {step(k::nfkc)}), "fi A1");
  EXPECT_EQ(normalize("\u00c5", {step(k::nfkd)}), "A\u030a");
  // Korean jamo compose into one syllable.
  EXPECT_EQ(normalize("\u1112\u1161\u11ab", {step(k::nfc)}), "\ud55c");
}

TEST(normalizer, lowercase_covers_more_than_ascii) {
  EXPECT_EQ(normalize("HeLLo \u00c9\u0394\u0416", {step(k::lowercase)}),
            "hello \u00e9\u03b4\u0436");
}

TEST(normalizer, replace_prepend_and_strip_in_order) {
  auto replace = step(k::replace);
  replace.pattern = " ";
  replace.content = "\u2581";
  auto prepend = step(k::prepend);
  prepend.content = "\u2581";
  EXPECT_EQ(normalize("a b  c", {prepend, replace}), "\u2581a\u2581b\u2581\u2581c");
  EXPECT_EQ(normalize("", {prepend, replace}), ""); // nothing to prepend to

  auto both = step(k::strip);
  both.left = both.right = true;
  auto right = step(k::strip);
  right.right = true;
  // White_Space, not only ASCII: no-break and ideographic spaces, NEL.
  EXPECT_EQ(normalize("\u00a0\u3000 x y\t\u0085", {both}), "x y");
  EXPECT_EQ(normalize("  x  ", {right}), "  x");
}

TEST(normalizer, invalid_utf8_passes_the_unicode_steps_unchanged) {
  const std::string bad = "ab\xff\xfe";
  EXPECT_EQ(normalize(bad, {step(k::nfc)}), bad);
  EXPECT_EQ(normalize(bad, {step(k::lowercase)}), bad);
}

} // namespace
} // namespace kvactor::model
