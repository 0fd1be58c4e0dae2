// A chat request's tools (openai_tools.hpp) and the answers that carry
// calls (completion.hpp): what tools, tool_choice and parallel_tool_calls
// make of a request, the history's calls as the template reads them, each
// refusal naming its field, and calls answered whole and streamed as
// OpenAI's API sends them.

#include "net/completion.hpp"
#include "net/openai_request.hpp"
#include "tests/model/chatml_template.hpp"

#include "sse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A template that shows the tools and the history's calls and answers.
const model::chat_template& tools_template() {
  static const model::chat_template t = *model::chat_template::from_text(
    "{% for t in tools %}[tool {{ t.function.name }}]{% endfor %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }} {{ "
    "c.function.arguments.city }}"
    "</tool_call>{% endfor %}{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}{% endfor %}");
  return t;
}

constexpr std::string_view tools =
  R"("tools":[{"type":"function","function":{"name":"get_weather","parameters":)"
  R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},)"
  R"({"type":"function","function":{"name":"ping"}}])";

std::variant<completion_request, api_error> chat(std::string_view fields) {
  return parse_chat_request(R"({"messages":[{"role":"user","content":"hi"}],)" +
                              std::string(fields) + "}",
                            1, tools_template(), {});
}

completion_request parsed(std::string_view fields) {
  auto r = chat(fields);
  EXPECT_TRUE(std::holds_alternative<completion_request>(r))
    << fields << " -> "
    << (std::holds_alternative<api_error>(r) ? std::get<api_error>(r).message : "");
  return std::holds_alternative<completion_request>(r) ? std::get<completion_request>(r)
                                                       : completion_request{};
}

TEST(openai_tools, tool_choice_decides_the_constraint_and_whether_answers_are_read) {
  const completion_request required = parsed(std::string(tools) + R"(,"tool_choice":"required")");
  const generate_request& r = required.prompts.at(0);
  EXPECT_EQ(r.constraint.kind, constraint_kind::tool_calls);
  EXPECT_THAT(r.constraint.text, HasSubstr(R"("parallel":true)"));
  EXPECT_THAT(r.constraint.text, HasSubstr(R"("name":"get_weather")"));
  EXPECT_THAT(r.constraint.text, HasSubstr(R"("name":"ping","parameters":null)"));
  EXPECT_THAT(r.prompt, HasSubstr("[tool get_weather][tool ping]"));
  EXPECT_EQ(required.tool_calls, tools_template().tool_format());

  const completion_request named =
    parsed(std::string(tools) + R"(,"tool_choice":{"type":"function","function":{"name":"ping"}})");
  EXPECT_THAT(named.prompts.at(0).constraint.text, HasSubstr(R"("parallel":false)"));
  EXPECT_THAT(named.prompts.at(0).constraint.text, Not(HasSubstr("get_weather")));
  EXPECT_TRUE(named.named_tool);
  EXPECT_FALSE(required.named_tool);
  EXPECT_TRUE(named.constrained_calls); // calls held to the grammar: streamed as written
  EXPECT_TRUE(required.constrained_calls);

  const completion_request serial =
    parsed(std::string(tools) + R"(,"tool_choice":"required","parallel_tool_calls":false)");
  EXPECT_THAT(serial.prompts.at(0).constraint.text, HasSubstr(R"("parallel":false)"));

  // auto: text, or calls held to their schemas once one begins (a lazy
  // grammar); a request constrained otherwise keeps its own constraint.
  const completion_request automatic = parsed(tools);
  EXPECT_EQ(automatic.prompts.at(0).constraint.kind, constraint_kind::tool_calls);
  EXPECT_THAT(automatic.prompts.at(0).constraint.text, HasSubstr(R"("lazy":true)"));
  EXPECT_THAT(automatic.prompts.at(0).constraint.text, HasSubstr(R"("parallel":true)"));
  EXPECT_TRUE(automatic.tool_calls.has_value());
  EXPECT_TRUE(automatic.constrained_calls);
  const completion_request as_json =
    parsed(std::string(tools) + R"(,"response_format":{"type":"json_object"})");
  EXPECT_EQ(as_json.prompts.at(0).constraint.kind, constraint_kind::json_object);
  EXPECT_TRUE(as_json.tool_calls.has_value()); // read for calls when it ends
  EXPECT_FALSE(as_json.constrained_calls);
  const completion_request none = parsed(std::string(tools) + R"(,"tool_choice":"none")");
  EXPECT_FALSE(none.tool_calls.has_value());
  EXPECT_FALSE(parsed(R"("max_tokens":3)").tool_calls.has_value());
}

TEST(openai_tools, the_history_calls_and_answers_reach_the_template) {
  auto r = parse_chat_request(
    R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,)"
    R"("tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather",)"
    R"("arguments":"{\"city\": \"Oslo\"}"}}]},{"role":"tool","tool_call_id":"call_9",)"
    R"("content":"-3C"}],)" +
      std::string(tools) + "}",
    1, tools_template(), {});
  ASSERT_TRUE(std::holds_alternative<completion_request>(r));
  EXPECT_THAT(std::get<completion_request>(r).prompts.at(0).prompt,
              HasSubstr("<assistant><tool_call>get_weather Oslo</tool_call><tool>-3C(call_9)"));
}

TEST(openai_tools, refusals_name_their_field) {
  struct bad {
    std::string fields, param, says;
  };
  for (const bad& b : {
         bad{R"("tools":[{"type":"retrieval"}])", "tools", "tools[0] must be"},
         bad{R"("tools":[{"type":"function","function":{"name":""}}])", "tools", "name"},
         bad{R"("tools":[{"type":"function","function":{"name":"f","parameters":3}}])", "tools",
             "parameters must be a JSON Schema object"},
         bad{R"("tools":[{"type":"function","function":{"name":"f"}},)"
             R"({"type":"function","function":{"name":"f"}}])",
             "tools", "a second function"},
         bad{std::string(tools) + R"(,"tool_choice":"always")", "tool_choice", "none, auto"},
         bad{std::string(tools) + R"(,"tool_choice":{"type":"function","function":{"name":"x"}})",
             "tool_choice", "'x', which is not in tools"},
         bad{R"("tool_choice":"required")", "tool_choice", "needs tools"},
         bad{std::string(tools) +
               R"(,"tool_choice":"required","response_format":{"type":"json_object"})",
             "tool_choice", "cannot take another constraint"},
       }) {
    auto r = chat(b.fields);
    ASSERT_TRUE(std::holds_alternative<api_error>(r)) << b.fields;
    const api_error& e = std::get<api_error>(r);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, std::optional<std::string>(b.param)) << b.fields << " -> " << e.message;
    EXPECT_THAT(e.message, HasSubstr(b.says)) << b.fields;
  }
  auto r = parse_chat_request(
    R"({"messages":[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f",)"
    R"("arguments":"[1]"}}]}]})",
    1, tools_template(), {});
  ASSERT_TRUE(std::holds_alternative<api_error>(r));
  EXPECT_THAT(std::get<api_error>(r).message, HasSubstr("arguments must be a JSON object"));
}

completion_meta chat_meta(bool stream) {
  completion_meta m{"chatcmpl-1", 1700000000, "tiny", stream};
  m.chat = true;
  m.tool_calls = model::tool_call_format::hermes;
  return m;
}

done_event done(request_id id, std::string reason, std::string text) {
  done_event d;
  d.id = id;
  d.finish_reason = finish_reason_of(reason).value();
  d.text = std::move(text);
  return d;
}

constexpr std::string_view two_calls =
  "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
  "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";

TEST(openai_tools, an_answer_of_calls_comes_as_tool_calls) {
  completion c(chat_meta(false), 2);
  c.accepted(0, 1);
  c.accepted(1, 2);
  c.on_done(done(1, "stop", std::string(two_calls)));
  c.on_done(done(2, "eos", "Just text."));
  simdjson::dom::parser p;
  simdjson::dom::element body = p.parse(c.finish());
  simdjson::dom::element first = body["choices"].at(0);
  EXPECT_EQ(std::string_view(first["finish_reason"]), "tool_calls");
  EXPECT_TRUE(first["message"]["content"].is_null());
  simdjson::dom::array calls = first["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(std::string_view(calls.at(0)["type"]), "function");
  EXPECT_EQ(std::string_view(calls.at(0)["function"]["name"]), "get_weather");
  EXPECT_EQ(std::string_view(calls.at(0)["function"]["arguments"]), R"({"city":"Oslo"})");
  EXPECT_THAT(std::string(std::string_view(calls.at(0)["id"])), HasSubstr("call_"));
  EXPECT_NE(std::string_view(calls.at(0)["id"]), std::string_view(calls.at(1)["id"]));
  simdjson::dom::element second = body["choices"].at(1);
  EXPECT_EQ(std::string_view(second["finish_reason"]), "stop");
  EXPECT_EQ(std::string_view(second["message"]["content"]), "Just text.");
}

TEST(openai_tools, a_call_forced_by_a_named_tool_choice_ends_with_stop) {
  for (const bool stream : {false, true}) {
    completion_meta m = chat_meta(stream);
    m.named_tool = true;
    completion c(m, 1);
    c.accepted(0, 1);
    const std::string one_call =
      "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
    std::string out = c.on_done(done(1, "stop", one_call));
    out += c.finish();
    EXPECT_THAT(out, HasSubstr(R"("finish_reason":"stop")")) << "stream " << stream;
    EXPECT_THAT(out, Not(HasSubstr(R"("finish_reason":"tool_calls")"))) << "stream " << stream;
    EXPECT_THAT(out, HasSubstr(R"("name":"ping")")) << "stream " << stream;
  }
}

TEST(openai_tools, a_stream_holds_text_that_may_be_calls_and_sends_them_as_deltas) {
  completion c(chat_meta(true), 1);
  c.accepted(0, 1);
  std::string out;
  size_t at = 0;
  for (size_t cut : {5ul, 20ul, two_calls.size()}) {
    out += c.on_token({1, 0, 7, std::string(two_calls.substr(at, cut - at))});
    at = cut;
  }
  EXPECT_EQ(out, ""); // held: it may be calls
  out += c.on_done(done(1, "stop", std::string(two_calls)));
  EXPECT_THAT(out, HasSubstr(R"("delta":{"role":"assistant","content":""})"));
  EXPECT_THAT(out, HasSubstr(R"("delta":{"tool_calls":[{"index":0,"id":"call_)"));
  EXPECT_THAT(out, HasSubstr(R"("function":{"name":"ping","arguments":""}}]})"));
  // Then the arguments alone, which a client appends to the call it holds.
  EXPECT_THAT(out, HasSubstr(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Oslo\"}"}}]})"));
  EXPECT_THAT(out, HasSubstr(R"("finish_reason":"tool_calls")"));
  EXPECT_THAT(out, Not(HasSubstr("<tool_call>")));

  completion text(chat_meta(true), 1);
  text.accepted(0, 1);
  EXPECT_EQ(text.on_token({1, 0, 7, " <tool"}), "");
  EXPECT_THAT(text.on_token({1, 0, 8, "bar> hi"}), HasSubstr(R"("content":" <toolbar> hi")"));
  EXPECT_THAT(text.on_token({1, 0, 9, "!"}), HasSubstr(R"("content":"!")"));
  EXPECT_THAT(text.on_done(done(1, "eos", " <toolbar> hi!")),
              HasSubstr(R"("finish_reason":"stop")"));
}

// What a client makes of a stream: the calls it assembles (a delta with an
// id opens one; arguments append to the call of their index), the content,
// the finish reason.
struct client_view {
  std::vector<std::pair<std::string, std::string>> calls; // name, arguments
  std::string content, finish_reason;
  size_t argument_deltas = 0;
};

void read_into(client_view& v, const std::string& stream) {
  simdjson::dom::parser p;
  for (const std::string& data : sse_events(stream)) {
    if (data == "[DONE]")
      continue;
    simdjson::dom::element choice = p.parse(data)["choices"].at(0);
    if (std::string_view reason; !choice["finish_reason"].get(reason))
      v.finish_reason = reason;
    if (std::string_view text; !choice["delta"]["content"].get(text))
      v.content += text;
    simdjson::dom::array calls;
    if (choice["delta"]["tool_calls"].get(calls))
      continue;
    for (simdjson::dom::element call : calls) {
      const auto k = size_t(int64_t(call["index"]));
      if (std::string_view id; !call["id"].get(id)) {
        EXPECT_EQ(k, v.calls.size()) << data;
        v.calls.emplace_back(std::string_view(call["function"]["name"]), "");
      }
      ASSERT_LT(k, v.calls.size()) << data;
      const std::string_view arguments = call["function"]["arguments"];
      v.argument_deltas += !arguments.empty();
      v.calls[k].second += arguments;
    }
  }
}

completion_meta constrained_meta(bool stream) {
  completion_meta m = chat_meta(stream);
  m.constrained_calls = true;
  return m;
}

TEST(openai_tools, a_constrained_call_streams_its_name_then_its_arguments_as_they_are_written) {
  completion c(constrained_meta(true), 1);
  c.accepted(0, 1);
  client_view v;
  bool seen_a_part = false; // the first call named, its arguments begun, not whole
  for (size_t at = 0; at < two_calls.size(); at += 4) {
    read_into(v, c.on_token({1, 0, 7, std::string(two_calls.substr(at, 4))}));
    seen_a_part |= !v.calls.empty() && v.calls[0].second.starts_with(R"({"ci)") &&
                   !v.calls[0].second.ends_with("}");
  }
  EXPECT_TRUE(seen_a_part);
  EXPECT_EQ(v.finish_reason, "");
  read_into(v, c.on_done(done(1, "stop", std::string(two_calls))) + c.finish());
  using call = std::pair<std::string, std::string>;
  EXPECT_EQ(v.calls, (std::vector<call>{{"get_weather", R"({"city":"Oslo"})"}, {"ping", "{}"}}));
  EXPECT_GT(v.argument_deltas, 3u); // piece by piece
  EXPECT_EQ(v.content, "");
  EXPECT_EQ(v.finish_reason, "tool_calls");

  // Text held back from the tokens (it could have begun a stop sequence)
  // comes with the done event; the calls end the same.
  completion late(constrained_meta(true), 1);
  late.accepted(0, 1);
  client_view w;
  read_into(w, late.on_token({1, 0, 7, std::string(two_calls.substr(0, 40))}));
  read_into(w, late.on_done(done(1, "stop", std::string(two_calls))));
  EXPECT_EQ(w.calls, v.calls);
  EXPECT_EQ(w.finish_reason, "tool_calls");
}

TEST(openai_tools, a_constrained_call_cut_short_is_answered_as_far_as_it_went) {
  const std::string cut(two_calls.substr(0, two_calls.find("slo")));
  completion streamed(constrained_meta(true), 1);
  streamed.accepted(0, 1);
  client_view v;
  read_into(v, streamed.on_token({1, 0, 7, cut}));
  read_into(v, streamed.on_done(done(1, "max_tokens", cut)) + streamed.finish());
  using call = std::pair<std::string, std::string>;
  EXPECT_EQ(v.calls, (std::vector<call>{{"get_weather", R"({"city":"O)"}}));
  EXPECT_EQ(v.finish_reason, "length");

  completion whole(constrained_meta(false), 1);
  whole.accepted(0, 1);
  whole.on_done(done(1, "max_tokens", cut));
  simdjson::dom::parser p;
  simdjson::dom::element choice = p.parse(whole.finish())["choices"].at(0);
  EXPECT_EQ(std::string_view(choice["finish_reason"]), "length");
  EXPECT_TRUE(choice["message"]["content"].is_null());
  EXPECT_EQ(std::string_view(choice["message"]["tool_calls"].at(0)["function"]["arguments"]),
            R"({"city":"O)");

  // Cut before a name: nothing to call, the text is the answer.
  completion early(constrained_meta(false), 1);
  early.accepted(0, 1);
  early.on_done(done(1, "max_tokens", "<tool_call>\n{\"na"));
  choice = p.parse(early.finish())["choices"].at(0);
  EXPECT_EQ(std::string_view(choice["message"]["content"]), "<tool_call>\n{\"na");
}

// tool_choice auto under its lazy grammar: text streams as content once it
// cannot begin a call; an answer that begins one streams as calls from there.
TEST(openai_tools, an_auto_answer_streams_as_text_or_as_calls_once_it_begins_one) {
  completion c(constrained_meta(true), 2);
  c.accepted(0, 1);
  c.accepted(1, 2);
  client_view calls, text;
  EXPECT_EQ(c.on_token({1, 0, 7, " \n<tool"}), ""); // may begin a call: held
  read_into(calls, c.on_token({1, 0, 8, "_call>\n{\"name\": \"pi"}));
  EXPECT_TRUE(calls.calls.empty()); // a call, not yet named
  read_into(calls, c.on_token({1, 0, 9, "ng\", \"arguments\": {"}));
  ASSERT_EQ(calls.calls.size(), 1u);
  EXPECT_EQ(calls.calls[0].second, "{");
  read_into(text, c.on_token({2, 0, 7, "Sure"}));
  EXPECT_EQ(text.content, "Sure");
  const std::string ping = " \n<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
  read_into(calls, c.on_token({1, 0, 10, "}}\n</tool_call>"}) + c.on_done(done(1, "stop", ping)));
  read_into(text, c.on_done(done(2, "eos", "Sure")));
  using call = std::pair<std::string, std::string>;
  EXPECT_EQ(calls.calls, (std::vector<call>{{"ping", "{}"}}));
  EXPECT_EQ(calls.content, "");
  EXPECT_EQ(calls.finish_reason, "tool_calls");
  EXPECT_EQ(text.finish_reason, "stop");
}

} // namespace
} // namespace kvactor::net
