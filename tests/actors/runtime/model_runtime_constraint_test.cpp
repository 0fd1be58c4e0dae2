// Constrained requests (structured outputs) served end to end on the tiny
// model, whose sampled text is otherwise gibberish: every text lies in its
// constraint's language, checked by parsers that are not the grammar engine
// (std::regex, simdjson); the tokens are those a request gets alone,
// through swap and recompute preemption and as one of n choices; a
// constraint that does not compile is refused, naming the construct.

#include "model_runtime_fixture.hpp"

#include <simdjson.h>

#include <regex>
#include <string>

namespace kvactor {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::model_runtime;
using testing::small_pool;
using testing::tokens;

constexpr std::string_view person_schema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 6},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["red", "green", 7]}, "maxItems": 3},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "age", "tags"]
})";

generate_request constrained(output_constraint c, uint64_t seed, int32_t max_tokens = 200) {
  generate_request r;
  r.prompt_tokens = tokens(7, 11 * seed + 1);
  r.max_tokens = max_tokens;
  r.temperature = 1.0f;
  r.seed = seed;
  r.constraint = std::move(c);
  return r;
}

// Whether `text` is an object as person_schema describes.
::testing::AssertionResult is_person(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(text).get(o))
    return ::testing::AssertionFailure() << "not a JSON object: " << text;
  std::string_view name;
  int64_t age;
  simdjson::dom::array tags;
  if (o["name"].get(name) || name.size() > 6 * 4 || o["age"].get(age) || o["tags"].get(tags) ||
      tags.size() > 3)
    return ::testing::AssertionFailure() << "wrong fields: " << text;
  for (auto tag : tags) {
    std::string_view s;
    int64_t n;
    if (!(!tag.get(s) && (s == "red" || s == "green")) && !(!tag.get(n) && n == 7))
      return ::testing::AssertionFailure() << "a tag outside the enum: " << text;
  }
  for (auto field : o)
    if (field.key != "name" && field.key != "age" && field.key != "tags" && field.key != "ok")
      return ::testing::AssertionFailure() << "an extra field: " << text;
  return ::testing::AssertionSuccess();
}

TEST_F(model_runtime, constrained_texts_lie_in_their_languages) {
  start(engine_config{});
  const output_constraint regex{constraint_kind::regex, "[a-z]{2,5}@(ab|cd)\\.com", {}};
  const output_constraint choice{constraint_kind::choice, {}, {"yes", "no", "maybe so"}};
  const output_constraint schema{constraint_kind::json_schema, std::string(person_schema), {}};
  const output_constraint grammar{
    constraint_kind::grammar, "root ::= \"(\" [0-9]{1,3} (\"+\" [0-9]{1,3})* \")\"", {}};
  int finished = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const done_event r = events_->wait_done(generate(constrained(regex, seed)));
    EXPECT_TRUE(std::regex_match(r.text, std::regex("[a-z]{2,5}@(ab|cd)\\.com"))) << r.text;
    EXPECT_EQ(r.finish_reason, finish_reason::stop);
    const done_event c = events_->wait_done(generate(constrained(choice, seed)));
    EXPECT_TRUE(c.text == "yes" || c.text == "no" || c.text == "maybe so") << c.text;
    EXPECT_EQ(c.finish_reason, finish_reason::stop);
    const done_event s = events_->wait_done(generate(constrained(schema, seed, 400)));
    if (s.finish_reason != finish_reason::max_tokens) {
      EXPECT_TRUE(is_person(s.text));
      ++finished;
    }
    const done_event g = events_->wait_done(generate(constrained(grammar, seed)));
    EXPECT_TRUE(std::regex_match(g.text, std::regex("\\([0-9]{1,3}(\\+[0-9]{1,3})*\\)")) ||
                g.finish_reason == finish_reason::max_tokens)
      << g.text;
  }
  EXPECT_GT(finished, 0); // a random model may run out of tokens inside a string
  expect_idle();
}

TEST_F(model_runtime, any_json_object_parses) {
  start(engine_config{});
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const done_event d =
      events_->wait_done(generate(constrained({constraint_kind::json_object, {}, {}}, seed, 300)));
    if (d.finish_reason == finish_reason::max_tokens) continue;
    simdjson::dom::parser parser;
    simdjson::dom::object o;
    EXPECT_FALSE(parser.parse(d.text).get(o)) << d.text;
  }
}

TEST_F(model_runtime, constrained_requests_keep_their_tokens_through_preemption_and_choices) {
  // NOTE: 300 characters take more than 24 tokens: every request runs to
  // max_tokens, so the small pool preempts whatever the timing.
  const output_constraint c{constraint_kind::regex, "[a-z ]{300}\\.", {}};
  std::vector<generate_request> reqs;
  for (uint64_t i = 0; i < 4; ++i) reqs.push_back(constrained(c, 5 + i, 24));
  engine_config roomy = small_pool(preemption_mode::swap);
  roomy.kv_cache_bytes = 256 * 4096;
  start(roomy);
  std::vector<std::vector<int32_t>> alone;
  for (const generate_request& r : reqs) {
    const done_event d = events_->wait_done(generate(r));
    EXPECT_EQ(d.finish_reason, finish_reason::max_tokens) << d.text;
    alone.push_back(d.tokens);
  }
  generate_request three = reqs[0];
  three.n = 3;
  const auto choices = events_->wait_choices(generate(three), 3);
  for (int32_t k = 1; k < 3; ++k) {
    generate_request one = reqs[0];
    one.seed += uint64_t(k);
    EXPECT_THAT(choices[size_t(k)].tokens,
                ElementsAreArray(events_->wait_done(generate(one)).tokens))
      << "choice " << k;
  }
  EXPECT_THAT(choices[0].tokens, ElementsAreArray(alone[0]));
  stop();

  for (preemption_mode mode : {preemption_mode::swap, preemption_mode::recompute}) {
    start(small_pool(mode));
    std::vector<request_id> ids;
    for (const generate_request& r : reqs) ids.push_back(generate(r));
    int preemptions = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const done_event done = events_->wait_done(ids[i]);
      EXPECT_THAT(done.tokens, ElementsAreArray(alone[i])) << to_string(mode) << ", request " << i;
      preemptions += done.preemptions;
    }
    EXPECT_GT(preemptions, 0) << to_string(mode);
    expect_idle();
    stop();
  }
}

admission admit(caf::scoped_actor& self, const runtime_actor& rt, const sink_actor& sink,
                const generate_request& req) {
  admission a;
  self->request(rt, caf::infinite, generate_atom::value, req, sink)
    .receive([&](const admission& x) { a = x; }, [&](const caf::error&) {});
  return a;
}

TEST_F(model_runtime, constraints_that_do_not_compile_are_refused_by_name) {
  start(engine_config{});
  const admission bad_regex =
    admit(self_, rt_, sink_, constrained({constraint_kind::regex, "(a|b", {}}, 1));
  EXPECT_EQ(bad_regex.error_code, errc::invalid_field);
  EXPECT_THAT(bad_regex.error_message, HasSubstr("constraint: regex"));
  const admission bad_schema = admit(
    self_, rt_, sink_,
    constrained({constraint_kind::json_schema, R"({"type": "integer", "minimum": 3})", {}}, 1));
  EXPECT_EQ(bad_schema.error_code, errc::invalid_field);
  EXPECT_THAT(bad_schema.error_message, HasSubstr("minimum"));
  const admission bad_grammar =
    admit(self_, rt_, sink_, constrained({constraint_kind::grammar, "root ::= x", {}}, 1));
  EXPECT_THAT(bad_grammar.error_message, HasSubstr("'x' is used but not defined"));
  expect_idle();
  stop();

  engine_config fixed;
  fixed.batching = batching_mode::fixed;
  start(fixed);
  const admission refused =
    admit(self_, rt_, sink_, constrained({constraint_kind::choice, {}, {"a"}}, 1));
  EXPECT_EQ(refused.error_code, errc::invalid_field);
  EXPECT_THAT(refused.error_message, HasSubstr("continuous batching"));
}

} // namespace
} // namespace kvactor
