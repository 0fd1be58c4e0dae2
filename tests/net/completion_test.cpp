#include "net/completion.hpp"

#include "sse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

completion_meta meta(bool stream, bool include_usage = false) {
  return {"cmpl-1", 1700000000, "tiny", stream, include_usage};
}

token_event token(request_id id, int32_t index, std::string text) {
  return {id, index, 100 + index, std::move(text)};
}

done_event done(request_id id, std::string reason, std::string text, int32_t prompt,
                int32_t generated) {
  done_event d;
  d.id = id;
  d.finish_reason = finish_reason_of(reason).value();
  d.text = std::move(text);
  d.prompt_tokens = prompt;
  d.completion_tokens = generated;
  d.cached_tokens = 1;
  return d;
}

TEST(completion, answers_a_batch_in_one_body_with_its_usage) {
  completion c(meta(false), 2);
  c.accepted(0, 7);
  c.accepted(1, 9);
  EXPECT_EQ(c.on_token(token(9, 0, "b")), "");
  EXPECT_EQ(c.on_done(done(9, "eos", "b", 3, 1)), "");
  EXPECT_FALSE(c.done());
  EXPECT_EQ(c.on_token(token(8, 0, "stray")), ""); // not ours
  c.on_done(done(7, "max_tokens", "a\"x", 4, 2));
  ASSERT_TRUE(c.done());

  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(c.finish());
  EXPECT_EQ(std::string_view(body["id"]), "cmpl-1");
  EXPECT_EQ(std::string_view(body["object"]), "text_completion");
  EXPECT_EQ(int64_t(body["created"]), 1700000000);
  EXPECT_EQ(std::string_view(body["model"]), "tiny");
  simdjson::dom::array choices = body["choices"];
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(int64_t(choices.at(0)["index"]), 0);
  EXPECT_EQ(std::string_view(choices.at(0)["text"]), "a\"x");
  EXPECT_EQ(std::string_view(choices.at(0)["finish_reason"]), "length");
  EXPECT_TRUE(choices.at(0)["logprobs"].is_null());
  EXPECT_EQ(std::string_view(choices.at(1)["text"]), "b");
  EXPECT_EQ(std::string_view(choices.at(1)["finish_reason"]), "stop");
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens"]), 7);
  EXPECT_EQ(int64_t(body["usage"]["completion_tokens"]), 3);
  EXPECT_EQ(int64_t(body["usage"]["total_tokens"]), 10);
  EXPECT_EQ(int64_t(body["usage"]["prompt_tokens_details"]["cached_tokens"]), 2);
}

TEST(completion, streams_each_piece_then_the_held_back_rest_then_usage_and_done) {
  completion c(meta(true, true), 1);
  c.accepted(0, 7);
  std::string stream = c.on_token(token(7, 0, "He"));
  EXPECT_EQ(c.on_token(token(7, 1, "")), ""); // nothing final yet: no event
  stream += c.on_token(token(7, 2, "llo"));
  // " wor" was held back (it could have begun a stop sequence): only the done has it.
  stream += c.on_done(done(7, "max_tokens", "Hello wor", 2, 4));
  ASSERT_TRUE(c.done());
  stream += c.finish();

  const auto events = sse_events(stream);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events.back(), "[DONE]");
  simdjson::dom::parser p;
  std::string text;
  for (size_t i = 0; i < 3; ++i) {
    simdjson::dom::element e = p.parse(events[i]);
    simdjson::dom::element choice = e["choices"].at(0);
    text += std::string_view(choice["text"]);
    EXPECT_TRUE(e["usage"].is_null()); // asked for usage: null until the last chunk
    EXPECT_EQ(choice["finish_reason"].is_null(), i < 2) << events[i];
  }
  EXPECT_EQ(text, "Hello wor");
  simdjson::dom::element last = p.parse(events[2]);
  EXPECT_EQ(std::string_view(last["choices"].at(0)["finish_reason"]), "length");
  simdjson::dom::element usage = p.parse(events[3]);
  EXPECT_EQ(simdjson::dom::array(usage["choices"]).size(), 0u);
  EXPECT_EQ(int64_t(usage["usage"]["completion_tokens"]), 4);
}

TEST(completion, a_stream_without_usage_ends_with_done_only) {
  completion c(meta(true), 1);
  c.accepted(0, 3);
  const std::string last = c.on_done(done(3, "aborted", "", 2, 0));
  EXPECT_THAT(last, HasSubstr(R"("finish_reason":"abort")"));
  EXPECT_THAT(last, ::testing::Not(HasSubstr("usage")));
  EXPECT_EQ(c.finish(), "data: [DONE]\n\n");
}

TEST(completion, carries_token_ids_when_asked_even_for_held_back_text) {
  completion_meta m = meta(true);
  m.return_token_ids = true;
  completion c(m, 1);
  c.accepted(0, 2);
  std::string s = c.on_token(token(2, 0, "a"));
  s += c.on_token(token(2, 1, "")); // held back: an event all the same, for its id
  done_event d = done(2, "max_tokens", "ab", 1, 2);
  d.tokens = {100, 101};
  s += c.on_done(d);
  const auto events = sse_events(s);
  ASSERT_EQ(events.size(), 3u);
  simdjson::dom::parser p;
  std::vector<int64_t> ids;
  for (const auto& e : events)
    for (int64_t id : simdjson::dom::array(p.parse(e)["choices"].at(0)["token_ids"]))
      ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<int64_t>{100, 101}));

  completion_meta w = meta(false);
  w.return_token_ids = true;
  completion whole(w, 1);
  whole.accepted(0, 2);
  whole.on_done(d);
  EXPECT_THAT(whole.finish(), HasSubstr(R"("token_ids":[100,101])"));
}

// As vLLM: a completion choice carries its prompt's ids, a chat its answer;
// streamed, the first event of each choice.
TEST(completion, carries_the_prompts_token_ids_when_asked) {
  completion_meta w = meta(false);
  w.return_token_ids = true;
  completion whole(w, 2);
  whole.accepted(0, 2, {5, 6});
  whole.accepted(1, 3, {7});
  whole.on_done(done(2, "max_tokens", "a", 2, 1));
  whole.on_done(done(3, "max_tokens", "b", 1, 1));
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(whole.finish());
  auto ids = [](simdjson::dom::element e) {
    std::vector<int64_t> v;
    for (int64_t id : simdjson::dom::array(e)) v.push_back(id);
    return v;
  };
  EXPECT_EQ(ids(body["choices"].at(0)["prompt_token_ids"]), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(ids(body["choices"].at(1)["prompt_token_ids"]), (std::vector<int64_t>{7}));

  completion_meta chat = meta(false);
  chat.chat = true;
  chat.return_token_ids = true;
  completion answer(chat, 1);
  answer.accepted(0, 4, {9, 8});
  answer.on_done(done(4, "eos", "hi", 2, 1));
  simdjson::dom::parser q;
  EXPECT_EQ(ids(q.parse(answer.finish())["prompt_token_ids"]), (std::vector<int64_t>{9, 8}));

  completion_meta s = meta(true);
  s.return_token_ids = true;
  completion stream(s, 1);
  stream.accepted(0, 2, {5, 6});
  const auto first = stream.on_token(token(2, 0, "a"));
  const auto second = stream.on_token(token(2, 1, "b"));
  EXPECT_THAT(first, HasSubstr(R"("prompt_token_ids":[5,6])"));
  EXPECT_THAT(second, ::testing::Not(HasSubstr("prompt_token_ids")));
  // Not asked: not there.
  completion plain(meta(false), 1);
  plain.accepted(0, 2, {5, 6});
  plain.on_done(done(2, "max_tokens", "a", 2, 1));
  EXPECT_THAT(plain.finish(), ::testing::Not(HasSubstr("prompt_token_ids")));
}

// A token that carries logprobs: its text, its logprob and two alternatives.
token_event with_logprobs(request_id id, int32_t index, std::string text, std::string bytes,
                          float logprob) {
  token_event ev = token(id, index, std::move(text));
  ev.has_logprobs = true;
  ev.logprob = {ev.token, logprob, bytes};
  ev.top_logprobs = {{ev.token, logprob, bytes}, {7, logprob - 1.0f, "zz"}};
  return ev;
}

TEST(completion, writes_logprobs_as_the_completions_api_has_them) {
  completion_meta m = meta(false);
  m.logprobs = true;
  completion c(m, 1);
  c.accepted(0, 3);
  c.on_token(with_logprobs(3, 0, "ab", "ab", -0.5f));
  c.on_token(with_logprobs(3, 1, "", "\xc3", -0.25f)); // a piece of a character: held back
  c.on_done(done(3, "max_tokens", "ab\xc3", 1, 2));
  simdjson::dom::parser p;
  simdjson::dom::element lp = p.parse(c.finish())["choices"].at(0)["logprobs"];
  simdjson::dom::array tokens = lp["tokens"];
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(std::string_view(tokens.at(0)), "ab");
  EXPECT_EQ(std::string_view(tokens.at(1)), "\xef\xbf\xbd"); // U+FFFD
  EXPECT_EQ(double(lp["token_logprobs"].at(1)), -0.25);
  EXPECT_EQ(double(lp["top_logprobs"].at(0)["zz"]), -1.5);
  EXPECT_EQ(double(lp["top_logprobs"].at(0)["ab"]), -0.5);
  EXPECT_EQ(int64_t(lp["text_offset"].at(0)), 0);
  EXPECT_EQ(int64_t(lp["text_offset"].at(1)), 2);

  // Streaming: every token's chunk carries its own, held-back text or not;
  // text_offset runs on; the last chunk has none.
  completion_meta sm = meta(true);
  sm.logprobs = true;
  completion s(sm, 1);
  s.accepted(0, 3);
  std::string out = s.on_token(with_logprobs(3, 0, "ab", "ab", -0.5f));
  out += s.on_token(with_logprobs(3, 1, "", "c", -0.25f));
  out += s.on_done(done(3, "max_tokens", "abc", 1, 2));
  const auto events = sse_events(out);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(int64_t(p.parse(events[1])["choices"].at(0)["logprobs"]["text_offset"].at(0)), 2);
  EXPECT_EQ(std::string_view(p.parse(events[1])["choices"].at(0)["logprobs"]["tokens"].at(0)), "c");
  EXPECT_TRUE(p.parse(events[2])["choices"].at(0)["logprobs"].is_null());
}

TEST(completion, writes_logprobs_as_the_chat_api_has_them) {
  completion_meta m{"chatcmpl-1", 1, "tiny", false, false, true};
  m.logprobs = true;
  completion c(m, 1);
  c.accepted(0, 4);
  c.on_token(with_logprobs(4, 0, "", "\xc3", -0.5f));
  c.on_done(done(4, "eos", "", 3, 1));
  simdjson::dom::parser p;
  simdjson::dom::element first = p.parse(c.finish())["choices"].at(0)["logprobs"]["content"].at(0);
  EXPECT_EQ(double(first["logprob"]), -0.5);
  simdjson::dom::array bytes = first["bytes"];
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_EQ(int64_t(bytes.at(0)), 0xc3); // exact, where the token text has U+FFFD
  simdjson::dom::array top = first["top_logprobs"];
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(std::string_view(top.at(1)["token"]), "zz");
  EXPECT_EQ(double(top.at(1)["logprob"]), -1.5);

  // Asked for nothing: null, whatever the events carry.
  completion none(meta(false), 1);
  none.accepted(0, 4);
  none.on_token(with_logprobs(4, 0, "a", "a", -0.5f));
  none.on_done(done(4, "eos", "a", 3, 1));
  EXPECT_TRUE(p.parse(none.finish())["choices"].at(0)["logprobs"].is_null());
}

TEST(completion, a_chat_answers_with_a_message_or_opens_each_choice_with_a_role_delta) {
  completion whole({"chatcmpl-1", 1, "tiny", false, false, true}, 1);
  whole.accepted(0, 4);
  whole.on_done(done(4, "eos", "Hi!", 3, 2));
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(whole.finish());
  EXPECT_EQ(std::string_view(body["object"]), "chat.completion");
  EXPECT_EQ(std::string_view(body["choices"].at(0)["message"]["role"]), "assistant");
  EXPECT_EQ(std::string_view(body["choices"].at(0)["message"]["content"]), "Hi!");
  EXPECT_EQ(std::string_view(body["choices"].at(0)["finish_reason"]), "stop");

  completion stream({"chatcmpl-2", 1, "tiny", true, false, true}, 1);
  stream.accepted(0, 5);
  std::string s = stream.on_token(token(5, 0, "Hi"));
  s += stream.on_done(done(5, "max_tokens", "Hi!", 3, 2));
  s += stream.finish();
  const auto events = sse_events(s);
  ASSERT_EQ(events.size(), 4u);
  simdjson::dom::element open = p.parse(events[0]);
  EXPECT_EQ(std::string_view(open["object"]), "chat.completion.chunk");
  EXPECT_EQ(std::string_view(open["choices"].at(0)["delta"]["role"]), "assistant");
  EXPECT_EQ(std::string_view(p.parse(events[1])["choices"].at(0)["delta"]["content"]), "Hi");
  simdjson::dom::element last = p.parse(events[2]);
  EXPECT_EQ(std::string_view(last["choices"].at(0)["delta"]["content"]), "!");
  EXPECT_EQ(std::string_view(last["choices"].at(0)["finish_reason"]), "length");
  EXPECT_EQ(events[3], "[DONE]");
}

} // namespace
} // namespace kvactor::net
