#include "model/tokenizer/incremental_decoder.hpp"

#include <gtest/gtest.h>

#include "model/rng.hpp"
#include "tests/model/tokenizer_fixture.hpp"

namespace kvactor::model {
namespace {

using namespace test_support;

tokenizer make() {
  auto spec = hand_built_spec();
  // A token that ends in the middle of a character: "a" + first byte of "é".
  spec.vocab.emplace_back(symbol('a') + symbol(0xc3), 300);
  spec.merges.emplace_back(symbol('a'), symbol(0xc3));
  auto t = tokenizer::build(spec, "test");
  KVACTOR_ASSERT(t.has_value(), "fixture tokenizer must build");
  return std::move(*t);
}

TEST(incremental_decoder, holds_back_incomplete_characters) {
  const auto t = make();
  incremental_decoder d(t);
  EXPECT_EQ(d.push(id_hello), "hello");
  EXPECT_EQ(d.push(0xf0), ""); // 🙂 = F0 9F 99 82
  EXPECT_EQ(d.push(0x9f), "");
  EXPECT_EQ(d.push(0x99), "");
  EXPECT_EQ(d.num_pending_bytes(), 3u);
  EXPECT_EQ(d.push(0x82), "🙂");
  EXPECT_EQ(d.num_pending_bytes(), 0u);
  EXPECT_EQ(d.push(300), "a"); // "a\xc3": the lead byte waits
  EXPECT_EQ(d.push(0xa9), "é");
  EXPECT_EQ(d.push(id_sp_world), " world");
  EXPECT_EQ(d.flush(), "");
}

TEST(incremental_decoder, passes_on_bytes_that_can_never_complete) {
  const auto t = make();
  incremental_decoder d(t);
  EXPECT_EQ(d.push(0xff), "\xff"); // not a lead byte at all
  EXPECT_EQ(d.push(0xe2), "");
  EXPECT_EQ(d.push('x'), "\xe2x"); // the sequence broke: nothing to wait for
  EXPECT_EQ(d.push(0xe2), "");
  EXPECT_EQ(d.flush(), "\xe2"); // end of stream: what is held comes out
  EXPECT_EQ(d.num_pending_bytes(), 0u);
}

TEST(incremental_decoder, special_tokens) {
  const auto t = make();
  incremental_decoder keep(t), skip(t, true);
  EXPECT_EQ(keep.push(id_eot), "<|endoftext|>");
  EXPECT_EQ(skip.push(id_eot), "");
}

TEST(incremental_decoder, pieces_concatenate_to_decode) {
  const auto t = make();
  rng r(3);
  for (std::string_view text :
       {"hello wörld 🙂 日本 aé", "a\xc3\xa9 \xf0\x9f\x99\x82 <|endoftext|>x"}) {
    const auto ids = t.encode(text);
    incremental_decoder d(t);
    std::string streamed;
    for (auto id : ids) {
      const std::string piece = d.push(id);
      // Every piece is whole characters: it never ends inside one.
      EXPECT_EQ(incomplete_utf8_tail(piece), 0u);
      streamed += piece;
    }
    streamed += d.flush();
    EXPECT_EQ(streamed, t.decode(ids));
    EXPECT_EQ(streamed, text);
  }
  // Random id streams, including ones that break characters.
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<token_id> ids;
    for (int i = 0; i < 12; ++i) ids.push_back(static_cast<token_id>(r.next() % 267));
    incremental_decoder d(t);
    std::string streamed;
    for (auto id : ids) streamed += d.push(id);
    streamed += d.flush();
    ASSERT_EQ(streamed, t.decode(ids));
  }
}

} // namespace
} // namespace kvactor::model
