#include "actors/requests/request_state.hpp"

#include "tests/model/tiny_tokenizers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace kvactor {
namespace {

using ::testing::HasSubstr;

const model::tokenizer& tok() { return test_support::tiny_tokenizer(); }

const request_limits limits{512, 64};
const auto t0 = request_state::clock::now();

request_state accepted(generate_request req) {
  auto made = request_state::make(7, std::move(req), tok(), limits, t0);
  EXPECT_TRUE(std::holds_alternative<request_state>(made));
  return std::move(std::get<request_state>(made));
}

admission refused(generate_request req) {
  auto made = request_state::make(7, std::move(req), tok(), limits, t0);
  EXPECT_TRUE(std::holds_alternative<admission>(made));
  return std::holds_alternative<admission>(made) ? std::get<admission>(made) : admission{};
}

generate_request text(std::string prompt, int32_t max_tokens = 4) {
  generate_request r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

TEST(request_state, tokenizes_text_and_keeps_given_tokens_as_they_are) {
  EXPECT_EQ(accepted(text("hello world")).prompt(), tok().encode("hello world"));
  generate_request r;
  r.prompt_tokens = {5, 0, 511};
  r.max_tokens = 4;
  EXPECT_EQ(accepted(r).prompt(), (std::vector<token_id>{5, 0, 511}));
}

TEST(request_state, adds_the_tokenizers_special_tokens_to_text_unless_told_not_to) {
  const auto& with_bos = test_support::tiny_tokenizer_with_bos();
  ASSERT_EQ(with_bos.prefix_ids().size(), 1u);
  const token_id bos = with_bos.prefix_ids()[0];

  auto plain = tok().encode("hello world");
  auto made = request_state::make(7, text("hello world"), with_bos, limits, t0);
  ASSERT_TRUE(std::holds_alternative<request_state>(made));
  plain.insert(plain.begin(), bos);
  EXPECT_EQ(std::get<request_state>(made).prompt(), plain);

  auto r = text("hello world");
  r.add_special_tokens = false;
  made = request_state::make(7, r, with_bos, limits, t0);
  ASSERT_TRUE(std::holds_alternative<request_state>(made));
  EXPECT_EQ(std::get<request_state>(made).prompt(), tok().encode("hello world"));
}

TEST(request_state, refuses_each_bad_field_by_name) {
  auto r = text("hi");
  r.max_tokens = 0;
  EXPECT_THAT(refused(r).error_message, HasSubstr("max_tokens"));
  r = text("hi");
  r.temperature = -1;
  EXPECT_THAT(refused(r).error_message, HasSubstr("temperature"));
  r = text("hi");
  r.top_p = 0;
  EXPECT_THAT(refused(r).error_message, HasSubstr("top_p"));
  r = text("hi");
  r.top_k = -2;
  EXPECT_THAT(refused(r).error_message, HasSubstr("top_k"));
  r = text("hi");
  r.logprobs = max_logprobs + 1;
  EXPECT_THAT(refused(r).error_message, HasSubstr("logprobs"));
  r.logprobs = -2;
  EXPECT_THAT(refused(r).error_message, HasSubstr("logprobs"));
  r = text("hi");
  r.stop = {""};
  EXPECT_THAT(refused(r).error_message, HasSubstr("stop"));
  EXPECT_THAT(refused(text("\xff\xfe")).error_message, HasSubstr("UTF-8"));
  EXPECT_THAT(refused(text("")).error_message, HasSubstr("empty"));
  generate_request t;
  t.prompt_tokens = {1, -1};
  EXPECT_EQ(refused(t).error_code, errc::invalid_field);
  auto a = refused(text(std::string(200, 'a'), 8));
  EXPECT_EQ(a.error_code, errc::prompt_too_long);
  EXPECT_EQ(a.id, 7u);
}

// The ranges every front door shares (request_fields) hold at admission:
// each field is taken at its limits and refused just beyond them.
TEST(request_state, takes_each_field_up_to_its_limit_and_no_further) {
  const request_limits wide{512, max_max_tokens + 64};
  auto made = [&](generate_request r) {
    return request_state::make(7, std::move(r), tok(), wide, t0);
  };
  auto is_refused_for = [&](generate_request r, const char* field) {
    auto m = made(std::move(r));
    if (!std::holds_alternative<admission>(m))
      return false;
    const admission& a = std::get<admission>(m);
    return a.error_code == errc::invalid_field && a.error_message.find(field) != std::string::npos;
  };
  auto r = text("hi", max_max_tokens);
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
  r.max_tokens = max_max_tokens + 1;
  EXPECT_TRUE(is_refused_for(r, "max_tokens"));
  r = text("hi");
  r.temperature = static_cast<float>(max_temperature);
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
  r.temperature = static_cast<float>(max_temperature) * 2;
  EXPECT_TRUE(is_refused_for(r, "temperature"));
  r.temperature = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(is_refused_for(r, "temperature"));
  r = text("hi");
  r.top_p = 1.0f;
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
  r.top_p = 1.5f;
  EXPECT_TRUE(is_refused_for(r, "top_p"));
  r = text("hi");
  r.priority = -max_priority;
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
  r.priority = max_priority + 1;
  EXPECT_TRUE(is_refused_for(r, "priority"));
  r.priority = std::numeric_limits<int32_t>::min();
  EXPECT_TRUE(is_refused_for(r, "priority"));
  r = text("hi");
  r.logprobs = max_logprobs;
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
  r = text("hi");
  r.stop = {"ok", "\xff"};
  EXPECT_TRUE(is_refused_for(r, "stop"));
  for (int32_t n : {0, max_choices + 1}) {
    r = text("hi");
    r.n = n;
    EXPECT_TRUE(is_refused_for(r, "n")) << n;
  }
  r = text("hi");
  r.n = max_choices;
  EXPECT_TRUE(std::holds_alternative<request_state>(made(r)));
}

// A request that asks for logprobs gets its token's and the alternatives'
// with their bytes; one that does not gets none, whatever the update holds.
TEST(request_state, token_events_carry_logprobs_only_when_asked) {
  const std::vector<token_id> ids = tok().encode("the hill");
  ASSERT_GE(ids.size(), 2u);
  const model::token_logprobs lp{-0.25f, {{ids[0], -0.25f}, {ids[1], -1.5f}}};
  auto asked = text("x", 8);
  asked.logprobs = 2;
  auto r = accepted(asked);
  auto ev = r.on_token(0, ids[0], t0, lp);
  ASSERT_TRUE(ev.has_value());
  EXPECT_TRUE(ev->has_logprobs);
  EXPECT_EQ(ev->logprob.token, ids[0]);
  EXPECT_EQ(ev->logprob.logprob, -0.25f);
  EXPECT_EQ(ev->logprob.bytes, tok().token_bytes(ids[0]));
  ASSERT_EQ(ev->top_logprobs.size(), 2u);
  EXPECT_EQ(ev->top_logprobs[1].token, ids[1]);
  EXPECT_EQ(ev->top_logprobs[1].logprob, -1.5f);
  EXPECT_EQ(ev->top_logprobs[1].bytes, tok().token_bytes(ids[1]));
  EXPECT_EQ(accepted(asked).params().num_logprobs, 2);

  auto plain = accepted(text("x", 8));
  EXPECT_EQ(plain.params().num_logprobs, -1);
  auto none = plain.on_token(0, ids[0], t0, lp);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_logprobs);
  EXPECT_TRUE(none->top_logprobs.empty());
}

TEST(request_state, streams_text_that_joins_up_to_the_whole) {
  auto r = accepted(text("x", 16));
  auto ids = tok().encode("the café on the hill");
  std::string streamed;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto ev = r.on_token(0, ids[i], t0);
    ASSERT_TRUE(ev.has_value());
    EXPECT_EQ(ev->index, int32_t(i));
    streamed += ev->text;
  }
  auto done = r.finish(0, {7, no_token, finish_reason::max_tokens, 0, 0}, t0);
  EXPECT_EQ(done.text, "the café on the hill");
  EXPECT_EQ(streamed, done.text);
  EXPECT_EQ(done.finish_reason, finish_reason::max_tokens);
  EXPECT_EQ(done.completion_tokens, int32_t(ids.size()));
}

TEST(request_state, stops_at_a_stop_sequence_and_never_streams_it) {
  auto req = text("x", 32);
  req.stop = {"on the"};
  auto r = accepted(req);
  auto ids = tok().encode("the cat on the hill");
  std::string streamed;
  for (token_id id : ids) {
    if (auto ev = r.on_token(0, id, t0))
      streamed += ev->text;
    if (r.stop_seen(0))
      break;
  }
  ASSERT_TRUE(r.stop_seen(0));
  EXPECT_FALSE(r.on_token(0, ids.back(), t0).has_value()); // late tokens are dropped
  auto done = r.finish(0, {7, no_token, finish_reason::stop, 0, 1}, t0);
  EXPECT_EQ(done.text, "the cat ");
  EXPECT_EQ(streamed, "the cat ");
  EXPECT_EQ(done.finish_reason, finish_reason::stop);
  EXPECT_EQ(done.preemptions, 1);
}

// Each choice streams, stops and ends on its own.
TEST(request_state, keeps_each_choice_apart) {
  auto req = text("x", 32);
  req.n = 2;
  req.stop = {"hill"};
  auto r = accepted(req);
  EXPECT_EQ(r.num_choices(), 2);
  const auto first = tok().encode("the hill");
  const auto second = tok().encode("a cat");
  std::string streamed[2];
  for (size_t i = 0; i < std::max(first.size(), second.size()); ++i) {
    if (i < first.size())
      if (auto ev = r.on_token(0, first[i], t0)) {
        EXPECT_EQ(ev->choice, 0);
        streamed[0] += ev->text;
      }
    if (i < second.size())
      if (auto ev = r.on_token(1, second[i], t0)) {
        EXPECT_EQ(ev->choice, 1);
        EXPECT_EQ(ev->index, int32_t(i));
        streamed[1] += ev->text;
      }
  }
  EXPECT_TRUE(r.stop_seen(0));
  EXPECT_FALSE(r.stop_seen(1));
  const auto a = r.finish(0, {0, no_token, finish_reason::stop, 0, 0}, t0);
  const auto b = r.finish(1, {1, no_token, finish_reason::max_tokens, 0, 0}, t0);
  EXPECT_EQ(a.choice, 0);
  EXPECT_EQ(a.text, "the ");
  EXPECT_EQ(a.finish_reason, finish_reason::stop);
  EXPECT_EQ(b.choice, 1);
  EXPECT_EQ(b.text, "a cat");
  EXPECT_EQ(streamed[1], "a cat");
  EXPECT_EQ(b.finish_reason, finish_reason::max_tokens);
  EXPECT_EQ(b.completion_tokens, int32_t(second.size()));
}

} // namespace
} // namespace kvactor
