// The output constraint's fields as each API names them, at both front
// doors: what each stores in generate_request::constraint, and each refusal
// naming its field.

#include "net/line_protocol.hpp"
#include "net/openai_request.hpp"
#include "tests/model/chatml_template.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace kvactor::net {
namespace {

using ::testing::HasSubstr;

std::variant<completion_request, api_error> completion(std::string_view fields) {
  return parse_completion_request(R"({"prompt":"a")" + std::string(fields) + "}", 1, {});
}

output_constraint constraint_of(std::string_view fields) {
  auto r = completion(fields);
  EXPECT_TRUE(std::holds_alternative<completion_request>(r))
    << fields << " -> "
    << (std::holds_alternative<api_error>(r) ? std::get<api_error>(r).message : "");
  return std::holds_alternative<completion_request>(r)
           ? std::get<completion_request>(r).prompts.at(0).constraint
           : output_constraint{};
}

api_error refused(std::string_view fields) {
  auto r = completion(fields);
  EXPECT_TRUE(std::holds_alternative<api_error>(r)) << fields;
  return std::holds_alternative<api_error>(r) ? std::get<api_error>(r) : api_error{0, ""};
}

constexpr std::string_view schema = R"({"type":"object","properties":{"a":{"type":"integer"}}})";

TEST(constraint_fields, each_api_field_stores_its_constraint) {
  using k = constraint_kind;
  const std::string s(schema);
  EXPECT_EQ(constraint_of(R"(,"guided_json":)" + s), (output_constraint{k::json_schema, s, {}}));
  EXPECT_EQ(constraint_of(R"(,"json_schema":)" + s), (output_constraint{k::json_schema, s, {}}));
  // A schema may come as a string holding one.
  EXPECT_EQ(constraint_of(R"(,"guided_json":"{\"type\":\"string\"}")"),
            (output_constraint{k::json_schema, R"({"type":"string"})", {}}));
  EXPECT_EQ(constraint_of(R"(,"structured_outputs":{"json":)" + s + "}"),
            (output_constraint{k::json_schema, s, {}}));
  EXPECT_EQ(constraint_of(R"(,"guided_regex":"[a-z]+\\d")"),
            (output_constraint{k::regex, "[a-z]+\\d", {}}));
  EXPECT_EQ(constraint_of(R"(,"structured_outputs":{"regex":"x|y"})"),
            (output_constraint{k::regex, "x|y", {}}));
  EXPECT_EQ(constraint_of(R"(,"guided_choice":["yes","no"])"),
            (output_constraint{k::choice, {}, {"yes", "no"}}));
  EXPECT_EQ(constraint_of(R"(,"structured_outputs":{"choice":["a"]})"),
            (output_constraint{k::choice, {}, {"a"}}));
  EXPECT_EQ(constraint_of(R"(,"grammar":"root ::= \"a\"")"),
            (output_constraint{k::grammar, R"(root ::= "a")", {}}));
  EXPECT_EQ(constraint_of(R"(,"guided_grammar":"root ::= \"a\"")"),
            (output_constraint{k::grammar, R"(root ::= "a")", {}}));
  EXPECT_EQ(constraint_of(R"(,"structured_outputs":{"json_object":true})"),
            (output_constraint{k::json_object, {}, {}}));
  EXPECT_EQ(constraint_of(R"(,"response_format":{"type":"json_object"})"),
            (output_constraint{k::json_object, {}, {}}));
  EXPECT_EQ(constraint_of(R"(,"response_format":{"type":"json_schema","json_schema":{"name":"n",)"
                          R"("schema":)" +
                          s + R"(,"strict":true}})"),
            (output_constraint{k::json_schema, s, {}}));
  EXPECT_TRUE(constraint_of(R"(,"response_format":{"type":"text"})").empty());
  EXPECT_TRUE(constraint_of(R"(,"guided_json":null)").empty());
  EXPECT_TRUE(constraint_of(R"(,"structured_outputs":{"regex":null})").empty());
}

TEST(constraint_fields, the_chat_api_reads_them_too) {
  auto r = parse_chat_request(R"({"messages":[{"role":"user","content":"hi"}],)"
                              R"("response_format":{"type":"json_object"}})",
                              1, test_support::chatml_template(), {});
  ASSERT_TRUE(std::holds_alternative<completion_request>(r));
  EXPECT_EQ(std::get<completion_request>(r).prompts.at(0).constraint.kind,
            constraint_kind::json_object);
}

TEST(constraint_fields, refusals_name_their_field) {
  struct bad {
    std::string_view fields, param, says;
  };
  for (const bad& b : {
         bad{R"(,"guided_json":7)", "guided_json", "a JSON Schema"},
         bad{R"(,"guided_regex":["a"])", "guided_regex", "a string"},
         bad{R"(,"guided_choice":"a")", "guided_choice", "an array of strings"},
         bad{R"(,"guided_choice":[1])", "guided_choice", "an array of strings"},
         bad{R"(,"structured_outputs":[])", "structured_outputs", "an object"},
         bad{R"(,"structured_outputs":{"xml":"a"})", "structured_outputs",
             "structured_outputs.xml is not supported"},
         bad{R"(,"structured_outputs":{"regex":1})", "structured_outputs",
             "structured_outputs.regex must be a string"},
         bad{R"(,"response_format":{"type":"xml"})", "response_format", "'xml' is not supported"},
         bad{R"(,"response_format":{"type":"json_schema"})", "response_format",
             "needs a json_schema object"},
         bad{R"(,"response_format":{"type":"json_schema","json_schema":{"name":"x"}})",
             "response_format", "needs a schema"},
         bad{R"(,"guided_regex":"a","guided_choice":["b"])", "guided_choice",
             "one output constraint"},
       }) {
    const api_error e = refused(b.fields);
    EXPECT_EQ(e.status, 400) << b.fields;
    EXPECT_EQ(e.param, std::optional<std::string>(b.param)) << b.fields << " -> " << e.message;
    EXPECT_THAT(e.message, HasSubstr(b.says)) << b.fields;
  }
}

TEST(constraint_fields, the_line_protocol_reads_them) {
  line_parser p(model::sampling_defaults{});
  auto m =
    p.parse(R"({"op":"generate","id":"r","prompt":"a","structured_outputs":{"regex":"[0-9]+"}})");
  ASSERT_TRUE(std::holds_alternative<generate_op>(m));
  EXPECT_EQ(std::get<generate_op>(m).request.constraint,
            (output_constraint{constraint_kind::regex, "[0-9]+", {}}));
  m = p.parse(R"({"op":"generate","id":"r","prompt":"a","json_schema":5})");
  ASSERT_TRUE(std::holds_alternative<protocol_error>(m));
  EXPECT_THAT(std::get<protocol_error>(m).message, HasSubstr("json_schema must be a JSON Schema"));
}

} // namespace
} // namespace kvactor::net
