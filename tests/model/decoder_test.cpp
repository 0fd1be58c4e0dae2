#include "model/tokenizer/decoder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/tokenizer/byte_level.hpp"

namespace kvactor::model {
namespace {

using k = decoder_step::kind;

decoder_step step(k what) {
  decoder_step s;
  s.what = what;
  return s;
}

token_decoder make(std::vector<decoder_step> steps) {
  auto d = token_decoder::make(std::move(steps), "tok.json");
  EXPECT_TRUE(d) << d.error().message;
  return d ? std::move(*d) : token_decoder{};
}

// Llama 2's chain: Replace '▁' -> ' ', ByteFallback, Fuse, Strip one leading ' '.
token_decoder llama2() {
  auto replace = step(k::replace);
  replace.pattern = "\u2581";
  replace.content.push_back(' '); // NOTE: not = " ": GCC 12 warns falsely (-Wrestrict)
  auto strip = step(k::strip);
  strip.content.push_back(' ');
  strip.start = 1;
  std::vector<decoder_step> steps;
  steps.push_back(std::move(replace));
  steps.push_back(step(k::byte_fallback));
  steps.push_back(step(k::fuse));
  steps.push_back(std::move(strip));
  return make(std::move(steps));
}

TEST(token_decoder, llama2_tokens_and_the_leading_space_of_a_text) {
  const auto d = llama2();
  EXPECT_EQ(d.token_text("\u2581Hello", false), " Hello");
  EXPECT_EQ(d.token_text("<0x0A>", false), "\n");
  EXPECT_EQ(d.token_text("<0xE2>", false), "\xe2"); // one byte of a character
  EXPECT_EQ(d.token_text("<0x0G>", false), "<0x0G>");
  EXPECT_FALSE(d.first_token_differs());
  std::string text = " Hello world ";
  d.finish(text); // the trim after Fuse: one leading space only
  EXPECT_EQ(text, "Hello world ");
}

TEST(token_decoder, metaspace_drops_the_first_tokens_replacement) {
  auto ms = step(k::metaspace);
  ms.replacement = "\u2581";
  ms.prepend_scheme = metaspace::prepend::first;
  const auto d = make({ms});
  EXPECT_TRUE(d.first_token_differs());
  EXPECT_EQ(d.token_text("\u2581Hi", true), "Hi");
  EXPECT_EQ(d.token_text("\u2581Hi", false), " Hi");
  ms.prepend_scheme = metaspace::prepend::never;
  EXPECT_EQ(make({ms}).token_text("\u2581Hi", true), " Hi");
}

TEST(token_decoder, byte_level_maps_symbols_and_keeps_other_text) {
  const auto d = make({step(k::byte_level)});
  EXPECT_EQ(d.token_text(bytes_to_symbols(" caf\xc3\xa9\n"), false), " caf\xc3\xa9\n");
  EXPECT_EQ(d.token_text("<|im_start|>", false), "<|im_start|>");
  EXPECT_EQ(d.token_text("\u4e2d", false), "\u4e2d"); // outside the byte alphabet
}

TEST(token_decoder, refuses_what_cannot_be_applied_token_by_token) {
  auto replace = step(k::replace);
  replace.pattern = "ab";
  auto made = token_decoder::make({step(k::fuse), replace}, "tok.json");
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message,
              ::testing::HasSubstr("tok.json: key 'decoder': Replace after Fuse"));
}

} // namespace
} // namespace kvactor::model
