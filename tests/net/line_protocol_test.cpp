#include "net/line_protocol.hpp"

#include "net/client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

protocol_error error_of(std::string_view line) {
  line_parser p;
  auto m = p.parse(line);
  EXPECT_TRUE(std::holds_alternative<protocol_error>(m)) << line;
  return std::holds_alternative<protocol_error>(m) ? std::get<protocol_error>(m) : protocol_error{};
}

generate_op generate_of(std::string_view line) {
  line_parser p;
  auto m = p.parse(line);
  EXPECT_TRUE(std::holds_alternative<generate_op>(m))
    << line << " -> "
    << (std::holds_alternative<protocol_error>(m) ? std::get<protocol_error>(m).message : "");
  return std::holds_alternative<generate_op>(m) ? std::get<generate_op>(m) : generate_op{};
}

TEST(line_protocol, parses_a_full_generate_line) {
  auto g = generate_of(R"({"op":"generate","id":"r1","prompt":"text","max_tokens":64,)"
                       R"("temperature":0.5,"top_k":7,"top_p":0.9,"seed":11,"priority":2,)"
                       R"("stop":["\n\n","END"],"ignore_eos":true})");
  EXPECT_EQ(g.id, "r1");
  EXPECT_EQ(g.request.prompt, "text");
  EXPECT_EQ(g.request.max_tokens, 64);
  EXPECT_FLOAT_EQ(g.request.temperature, 0.5f);
  EXPECT_EQ(g.request.top_k, 7);
  EXPECT_FLOAT_EQ(g.request.top_p, 0.9f);
  EXPECT_EQ(g.request.seed, 11u);
  EXPECT_EQ(g.request.priority, 2);
  EXPECT_EQ(g.request.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(g.request.ignore_eos);
  EXPECT_TRUE(g.request.add_special_tokens);
  EXPECT_FALSE(generate_of(R"({"op":"generate","id":"r","prompt":"t","add_special_tokens":false})")
                 .request.add_special_tokens);
  EXPECT_FALSE(g.request.return_prompt_tokens);
  EXPECT_TRUE(generate_of(R"({"op":"generate","id":"r","prompt":"t","return_token_ids":true})")
                .request.return_prompt_tokens);
}

TEST(line_protocol, applies_defaults_and_takes_fields_in_any_order) {
  auto g = generate_of(R"({"prompt_tokens":[1,2,3],"id":"x","op":"generate"})" "\r");
  EXPECT_EQ(g.request.prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(g.request.prompt.empty());
  generate_request defaults;
  EXPECT_EQ(g.request.max_tokens, defaults.max_tokens);
  EXPECT_EQ(g.request.temperature, 0.0f);
  EXPECT_EQ(g.request.top_p, 1.0f);
}

TEST(line_protocol, parses_cancel_stats_and_ping) {
  line_parser p;
  auto c = p.parse(R"({"op":"cancel","id":"r1"})");
  ASSERT_TRUE(std::holds_alternative<cancel_op>(c));
  EXPECT_EQ(std::get<cancel_op>(c).id, "r1");
  EXPECT_TRUE(std::holds_alternative<stats_op>(p.parse(R"({"op":"stats"})")));
  EXPECT_TRUE(std::holds_alternative<ping_op>(p.parse(R"({"op":"ping"})")));
}

TEST(line_protocol, reports_unparseable_lines_without_an_id) {
  for (auto line : {"not json", "[1,2]", "\"s\"", R"({"op":"ping")", R"({"op":"ping"} x)",
                    R"({"op":"ping"}{"op":"ping"})", R"({"op":"ping","id":"a\x"})"}) {
    auto e = error_of(line);
    EXPECT_EQ(e.code, "bad_json") << line;
    EXPECT_FALSE(e.id.has_value()) << line;
  }
  auto utf8 = error_of("{\"op\":\"generate\",\"id\":\"r\",\"prompt\":\"\xff\"}");
  EXPECT_EQ(utf8.code, "invalid_field");
  EXPECT_FALSE(utf8.id.has_value());
}

TEST(line_protocol, names_the_request_in_field_errors) {
  struct case_t {
    const char* line;
    const char* code;
    const char* mentions;
  };
  const case_t cases[] = {
    {R"({"id":"r1","prompt":"a"})", "missing_field", "op"},
    {R"({"op":"fly","id":"r1"})", "unknown_op", "fly"},
    {R"({"op":"generate","id":"r1"})", "missing_field", "prompt"},
    {R"({"op":"generate","id":"r1","prompt":"a","prompt_tokens":[1]})", "invalid_field",
     "exactly one"},
    {R"({"op":"generate","id":"r1","prompt":"a","max_tokens":0})", "invalid_field", "max_tokens"},
    {R"({"op":"generate","id":"r1","prompt":"a","logprobs":21})", "invalid_field", "logprobs"},
    {R"({"op":"generate","id":"r1","prompt":"a","logprobs":-1})", "invalid_field", "logprobs"},
    {R"({"op":"generate","id":"r1","prompt":"a","n":0})", "invalid_field", "n must be"},
    {R"({"op":"generate","id":"r1","prompt":"a","n":129})", "invalid_field", "n must be"},
    {R"({"op":"generate","id":"r1","prompt":"a","max_tokens":"16"})", "invalid_field",
     "max_tokens"},
    {R"({"op":"generate","id":"r1","prompt":"a","max_tokens":1e20})", "invalid_field",
     "max_tokens"},
    {R"({"op":"generate","id":"r1","prompt":"a","temperature":-1})", "invalid_field",
     "temperature"},
    {R"({"op":"generate","id":"r1","prompt":"a","top_p":0})", "invalid_field", "top_p"},
    {R"({"op":"generate","id":"r1","prompt":"a","top_p":1.5})", "invalid_field", "top_p"},
    {R"({"op":"generate","id":"r1","prompt":"a","top_k":-3})", "invalid_field", "top_k"},
    {R"({"op":"generate","id":"r1","prompt":"a","seed":-1})", "invalid_field", "seed"},
    {R"({"op":"generate","id":"r1","prompt":"a","stop":"x"})", "invalid_field", "stop"},
    {R"({"op":"generate","id":"r1","prompt":"a","stop":["x",""]})", "invalid_field", "stop"},
    {R"({"op":"generate","id":"r1","prompt":"a","max_tokens":1048577})", "invalid_field",
     "max_tokens"},
    {R"({"op":"generate","id":"r1","prompt":"a","temperature":1e7})", "invalid_field",
     "temperature"},
    {R"({"op":"generate","id":"r1","prompt":"a","top_k":4294967296})", "invalid_field", "top_k"},
    {R"({"op":"generate","id":"r1","prompt":"a","priority":1000001})", "invalid_field", "priority"},
    {R"({"op":"generate","id":"r1","prompt":"a","priority":"high"})", "invalid_field", "priority"},
    {R"({"op":"generate","id":"r1","prompt":"a","ignore_eos":1})", "invalid_field", "ignore_eos"},
    {R"({"op":"generate","id":"r1","prompt_tokens":[1,"2"]})", "invalid_field", "prompt_tokens"},
    {R"({"op":"generate","id":"r1","prompt_tokens":[]})", "invalid_field", "prompt_tokens"},
    {R"({"op":"generate","id":"r1","prompt":7})", "invalid_field", "prompt"},
  };
  for (const auto& c : cases) {
    auto e = error_of(c.line);
    EXPECT_EQ(e.code, c.code) << c.line;
    EXPECT_EQ(e.id, std::optional<std::string>("r1")) << c.line;
    EXPECT_THAT(e.message, HasSubstr(c.mentions)) << c.line;
  }
  auto no_id = error_of(R"({"op":"generate","prompt":"a"})");
  EXPECT_EQ(no_id.code, "missing_field");
  EXPECT_FALSE(no_id.id.has_value());
  EXPECT_EQ(error_of(R"({"op":"cancel","id":5})").code, "invalid_field");
}

TEST(line_protocol, formats_events_that_parse_back) {
  done_event d;
  d.finish_reason = finish_reason::stop;
  d.tokens = {5, 6};
  d.text = "a \"quoted\"\nline \xff";
  d.prompt_tokens = 3;
  d.completion_tokens = 2;
  d.cached_tokens = 1;
  d.ttft_ms = 1.5;
  d.total_ms = 20.25;
  d.preemptions = 4;
  auto line = format_done("r9", d);
  ASSERT_EQ(line.back(), '\n');
  auto e = parse_event(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(e.has_value()) << line;
  EXPECT_EQ(e->event, "done");
  EXPECT_EQ(e->id, "r9");
  EXPECT_EQ(e->finish_reason, "stop");
  EXPECT_EQ(e->tokens, d.tokens);
  EXPECT_EQ(e->text, "a \"quoted\"\nline \xef\xbf\xbd"); // invalid byte -> U+FFFD
  EXPECT_EQ(e->completion_tokens, 2);
  EXPECT_EQ(e->cached_tokens, 1);
  EXPECT_DOUBLE_EQ(e->total_ms, 20.25);
  EXPECT_EQ(e->preemptions, 4);

  auto err = parse_event(format_error({"bad_json", std::nullopt, "x"}));
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, "bad_json");
  EXPECT_THAT(err->line, HasSubstr(R"("id":null)"));
  EXPECT_EQ(parse_event(format_pong())->event, "pong");
  auto tok = parse_event(format_token("a", {1, 3, 42, "hé"}));
  EXPECT_EQ(tok->index, 3);
  EXPECT_EQ(tok->token, 42);
  EXPECT_EQ(tok->text, "hé");
  EXPECT_THAT(tok->line, Not(HasSubstr("logprob")));
  EXPECT_THAT(tok->line, Not(HasSubstr("choice")));
  // A request of several choices: each event names its own.
  token_event second{1, 0, 42, "h"};
  second.choice = 2;
  EXPECT_EQ(parse_event(format_token("a", second, 3))->choice, 2);
  d.choice = 1;
  EXPECT_EQ(parse_event(format_done("a", d, 3))->choice, 1);
}

// A token event of a request that asked for logprobs: its token's, then the
// alternatives with their bytes (a piece of a character as U+FFFD) and -inf
// as -9999.
TEST(line_protocol, token_events_carry_logprobs_when_asked) {
  token_event ev{1, 0, 42, "h", true, {42, -0.5f, "h"}, {}};
  ev.top_logprobs = {{42, -0.5f, "h"}, {7, -std::numeric_limits<float>::infinity(), "\xc3"}};
  const std::string line = format_token("a", ev);
  auto parsed = parse_event(line);
  ASSERT_TRUE(parsed.has_value()) << line;
  EXPECT_THAT(
    line,
    HasSubstr(R"("text":"h","logprob":-0.5,"top_logprobs":[{"token":42,"text":"h","logprob":-0.5},)"
              "{\"token\":7,\"text\":\"\xef\xbf\xbd\",\"logprob\":-9999}]"));
}

TEST(line_protocol, client_lines_parse_as_the_same_request) {
  generate_request req;
  req.prompt = "hi \"there\"";
  req.max_tokens = 9;
  req.temperature = 0.25f;
  req.top_k = 3;
  req.seed = 77;
  req.priority = -2;
  req.stop = {"\n", "x"};
  req.logprobs = 4;
  req.n = 5;
  auto g = generate_of(generate_line("q", req));
  EXPECT_EQ(g.request.logprobs, 4);
  EXPECT_EQ(g.request.n, 5);
  EXPECT_EQ(g.id, "q");
  EXPECT_EQ(g.request.prompt, req.prompt);
  EXPECT_EQ(g.request.max_tokens, 9);
  EXPECT_FLOAT_EQ(g.request.temperature, 0.25f);
  EXPECT_EQ(g.request.seed, 77u);
  EXPECT_EQ(g.request.priority, -2);
  EXPECT_EQ(g.request.stop, req.stop);
  line_parser p;
  EXPECT_TRUE(std::holds_alternative<cancel_op>(p.parse(cancel_line("q"))));
}

TEST(line_protocol, formats_an_error_end_as_an_error_line) {
  done_event d;
  d.id = 4;
  d.finish_reason = finish_reason::error;
  d.error_code = errc::worker_lost;
  d.error_message = "worker h:1 was lost";
  EXPECT_EQ(format_done("r4", d),
            R"({"event":"error","id":"r4","code":"worker_lost","message":"worker h:1 was lost"})"
            "\n");
}

TEST(line_protocol, lists_a_fronts_workers_in_stats) {
  runtime_figures f;
  EXPECT_THAT(format_stats(f), Not(HasSubstr("workers")));
  f.workers = {worker_figures{"h:1", "live", "", 10, 4, 1, 2, 7, 3},
               worker_figures{"h:2", "down", "lost", 0, 0, 0, 0, 5, 0, 2}};
  const auto line = format_stats(f);
  EXPECT_THAT(line, HasSubstr(R"("workers":[{"address":"h:1","state":"live","message":"",)"
                              R"("device_blocks_total":10,"device_blocks_free":4,"running":1,)"
                              R"("waiting":2,"requests_routed":7,"requests_live":3,)"
                              R"("requests_resubmitted":0},)"
                              R"({"address":"h:2","state":"down","message":"lost")"));
  EXPECT_THAT(line, HasSubstr(R"("requests_live":0,"requests_resubmitted":2}])"));
}

} // namespace
} // namespace kvactor::net
