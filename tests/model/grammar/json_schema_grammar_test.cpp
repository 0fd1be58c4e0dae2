// json_schema_grammar against an independent validator: random sentences of
// each corpus schema (json_schemas/*.json) must pass Python's jsonschema
// (validate_instances.py), hand-written texts are accepted or refused, and
// each refusal names its keyword and where it sits.

#include "model/grammar/json_schema_grammar.hpp"
#include "base/json.hpp"

#include "model/grammar/json_grammar_parts.hpp"
#include "tests/model/grammar/grammar_walk.hpp"
#include "tests/model/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace kvactor::model {
namespace {

namespace fs = std::filesystem;

const fs::path grammar_tests = fs::path(KVACTOR_SOURCE_DIR) / "tests/model/grammar";
const fs::path corpus = grammar_tests / "json_schemas";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A Python with jsonschema: $KVACTOR_PYTHON, else the first of python3 and
// /usr/bin/python3 that has it (empty: none).
const std::string& python() {
  static const std::string chosen = [] {
    std::vector<std::string> candidates = {"python3", "/usr/bin/python3"};
    if (const char* set = std::getenv("KVACTOR_PYTHON")) candidates = {set};
    for (const std::string& p : candidates)
      if (std::system((p + " -c 'import jsonschema' >/dev/null 2>&1").c_str()) == 0) return p;
    return std::string();
  }();
  return chosen;
}

// Runs validate_instances.py on `lines`: its exit status and output.
std::pair<int, std::string> validate(const fs::path& lines) {
  const std::string command = python() + " '" + (grammar_tests / "validate_instances.py").string() +
                              "' '" + lines.string() + "' '" + corpus.string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {-1, "could not run " + command};
  std::string output;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  return {::pclose(pipe), output};
}

// One line of the validator's input.
std::string instance_line(const std::string& schema_file, std::string_view text) {
  const std::string name = schema_file.empty() ? "null" : json::quote(schema_file);
  return "{\"schema_file\": " + name + ", \"instance\": " + json::quote(text) + "}\n";
}

std::shared_ptr<const grammar> compiled(std::string_view schema) {
  result<grammar> g = json_schema_grammar(schema);
  KVACTOR_ASSERT(g.has_value(), "a test schema is refused");
  return std::make_shared<const grammar>(*std::move(g));
}

std::shared_ptr<const grammar> corpus_grammar(const std::string& name) {
  return compiled(read_text(corpus / name));
}

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(corpus))
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  std::ranges::sort(names);
  return names;
}

TEST(json_schema_grammar, corpus_sentences_pass_a_validator) {
  ASSERT_FALSE(python().empty())
    << "no python3 with jsonschema (tools/bootstrap installs Debian's python3-jsonschema)";
  const std::vector<std::string> names = corpus_files();
  ASSERT_GE(names.size(), 30u);
  test_support::temp_dir dir;
  std::ofstream lines(dir / "instances.jsonl", std::ios::binary);
  constexpr int num_sentences = 100;
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    result<grammar> g = json_schema_grammar(read_text(corpus / names[i]));
    ASSERT_TRUE(g.has_value()) << g.error().message;
    const auto shared = std::make_shared<const grammar>(*std::move(g));
    std::mt19937_64 rng(1000 + i);
    std::set<std::string> distinct;
    for (int n = 0; n < num_sentences; ++n) {
      const std::optional<std::string> sentence = testing::random_sentence(shared, rng);
      ASSERT_TRUE(sentence.has_value()) << "sentence " << n << " found no end";
      lines << instance_line(names[i], *sentence);
      distinct.insert(*sentence);
    }
    EXPECT_GE(distinct.size(), 2u);
  }
  lines.close();
  const auto [status, output] = validate(dir / "instances.jsonl");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("ok: " + std::to_string(names.size() * num_sentences)), std::string::npos)
    << output;
}

TEST(json_schema_grammar, json_object_sentences_are_objects) {
  ASSERT_FALSE(python().empty())
    << "no python3 with jsonschema (tools/bootstrap installs Debian's python3-jsonschema)";
  const auto g = std::make_shared<const grammar>(json_object_grammar());
  test_support::temp_dir dir;
  std::ofstream lines(dir / "objects.jsonl", std::ios::binary);
  std::mt19937_64 rng(7);
  for (int n = 0; n < 200; ++n) {
    const std::optional<std::string> sentence = testing::random_sentence(g, rng);
    ASSERT_TRUE(sentence.has_value());
    lines << instance_line("", *sentence);
  }
  lines.close();
  const auto [status, output] = validate(dir / "objects.jsonl");
  EXPECT_EQ(status, 0) << output;
}

TEST(json_schema_grammar, json_object_grammar_takes_any_object_only) {
  const auto g = std::make_shared<const grammar>(json_object_grammar());
  for (std::string_view text :
       {R"({})", R"({"a":1})", R"({"a": [1, 2.5e-3, "x"], "b": {"c": null}, "d": true})",
        R"({"\u00e9\n":"\ud83d\ude00"})", R"({"k":-0.0E+12})"})
    EXPECT_TRUE(testing::accepts(g, text)) << text;
  for (std::string_view text :
       {R"([])", R"("a")", R"({"a":1,})", R"({ "a":1})", R"({"a" :1})", R"({"a":01})",
        R"({"a":1.})", R"({"a":"\x"})", R"({"a":"\ud800"})", "{\"a\":\"\x01\"}",
        R"({"a":1234567890123456})", R"({"a":1e1234})", R"({"a":tru})", R"({"a":1}  )"})
    EXPECT_FALSE(testing::accepts(g, text)) << text;
}

struct case_texts {
  std::string schema_file;
  std::vector<std::string_view> valid, invalid;
};

TEST(json_schema_grammar, hand_written_texts) {
  const std::vector<case_texts> cases = {
    {"person.json",
     {R"({"name":"Ann","age":30})", R"({"name": "Ann", "age": 30, "email": "a.b@c.de"})",
      R"({"name":"Ann","age":-7,"email":"x@y.org"})"},
     {R"({"name":"Ann"})", R"({"name":"Ann","age":"30"})", R"({"name":"Ann","age":30,"x":1})",
      R"({"name":"","age":1})", R"({"name":"Ann","age":1.5})", R"({"name":"Ann" ,"age":1})",
      R"({"name":"Ann",  "age":1})", R"({"name":"Ann","age":1,"email":"nobody"})",
      R"({"age":30,"name":"Ann"})"}}, // NOTE: properties come in the schema's order
    {"optional_first.json",
     {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"b":"x","c":true})",
      R"({"a":1, "b":"xyz", "c":false})"},
     {R"({})", R"({"a":1})", R"({"b":"x",})", R"({,"b":"x"})", R"({"b":"long"})"}},
    {"optional_all.json",
     {R"({})", R"({"c":true})", R"({"a":1,"d":"ab"})", R"({"b":null, "c":false})"},
     {R"({"d":"abc"})", R"({"a":1,})", R"({,})", R"({"e":1})"}},
    {"enum_mixed.json",
     {R"("red")", R"(2.5)", R"(-0.03)", R"({"a":[1,2],"b":"x"})", R"("quote\"and\\slash")",
      "\"caf\xC3\xA9\"", R"("line\nbreak")", R"(null)"},
     {R"("blue")", R"(3)", R"({"b":"x","a":[1,2]})", R"("RED")", R"("caf\u00e9")"}},
    {"enum_typed.json", {R"("small")", R"(3)", R"(7)"}, {R"(null)", R"(4.5)", R"("medium")"}},
    {"array_bounds.json",
     {R"([1,2])", R"([1, 2, 3, 4, 5])"},
     {R"([1])", R"([1,2,3,4,5,6])", R"([1,"2"])", R"([])"}},
    {"prefix_items.json",
     {R"(["a"])", R"(["a",1])", R"(["a", 1, true])"},
     {R"([])", R"([1])", R"(["a",1,true,2])", R"(["a",true])"}},
    {"prefix_then_items.json",
     {R"(["point",1,2])", R"(["point",1.5,2,3,4])"},
     {R"(["point",1])", R"(["circle",1,2])", R"(["point",1,2,3,4,5])"}},
    {"string_lengths.json",
     {R"({"short":"ab","empty":"","long":"abc","exact":"ab\ncd"})",
      "{\"short\":\"\xC3\xA9\xC3\xA9\",\"empty\":\"\",\"long\":\"\\ud83d\\ude00ab\","
      "\"exact\":\"\\u00e9\\\"\\\\\\/x\"}"},
     {R"({"short":"abcde","empty":"","long":"abc","exact":"abcde"})",
      R"({"short":"a","empty":"","long":"abc","exact":"abcde"})",
      R"({"short":"ab","empty":"x","long":"abc","exact":"abcde"})",
      R"({"short":"ab","empty":"","long":"ab","exact":"abcde"})",
      R"({"short":"ab","empty":"","long":"abc","exact":"abcdef"})"}},
    {"recursive_tree.json",
     {R"({"value":1,"children":[{"value":2,"children":[]},{"value":3,"children":[]}]})"},
     {R"({"value":1})",
      R"({"value":1,"children":[{"value":2,"children":[]},{"value":2,"children":[]},)"
      R"({"value":2,"children":[]},{"value":2,"children":[]}]})"}},
    {"additional_schema.json",
     {R"({"name":"x","count":3})", R"({"name":"x","count":3,"extra":4, "more":5})"},
     {R"({"name":"x"})", R"({"name":"x","count":3,"extra":"s"})"}},
    {"additional_true.json", {R"({"id":1,"foo":[1,{"a":null}]})"}, {R"({"foo":1})"}},
    {"definitions_ref.json",
     {R"({"primary":"red","flag":true})", R"({"primary":"red","secondary":"blue","flag":false})"},
     {R"({"primary":"pink","flag":true})", R"({"primary":"red"})"}},
    {"any_of.json", {R"("abcd")", R"(12)", R"({"x":1.5})"}, {R"("abcde")", R"(1.5)", R"({"y":1})"}},
    {"numbers.json",
     {R"({"count":123456789012345,"ratio":1.5e-30,"samples":[0,-0.5,1E+2]})"},
     {R"({"count":1234567890123456,"ratio":1,"samples":[]})",
      R"({"count":1,"ratio":1e1000,"samples":[]})", R"({"count":01,"ratio":1,"samples":[]})",
      R"({"count":1.0,"ratio":1,"samples":[]})", R"({"count":1,"ratio":.5,"samples":[]})"}},
    {"unicode_keys.json",
     {"{\"na\xC3\xAFve\":true,\"with \\\"quote\\\"\":1,\"tab\\there\":null,"
      "\"back\\\\slash\":\"a\\u0001b\"}"},
     {"{\"naive\":true,\"with \\\"quote\\\"\":1,\"tab\\there\":null,"
      "\"back\\\\slash\":\"a\\u0001b\"}"}},
  };
  for (const case_texts& c : cases) {
    SCOPED_TRACE(c.schema_file);
    const auto g = corpus_grammar(c.schema_file);
    for (std::string_view text : c.valid) EXPECT_TRUE(testing::accepts(g, text)) << text;
    for (std::string_view text : c.invalid) EXPECT_FALSE(testing::accepts(g, text)) << text;
  }
}

TEST(json_schema_grammar, formats_are_exact) {
  const auto g = corpus_grammar("formats.json");
  const auto text = [](std::string_view day, std::string_view clock, std::string_view moment,
                       std::string_view id, std::string_view mail, std::string_view host) {
    return "{\"day\":\"" + std::string(day) + "\",\"clock\":\"" + std::string(clock) +
           "\",\"moment\":\"" + std::string(moment) + "\",\"id\":\"" + std::string(id) +
           "\",\"mail\":\"" + std::string(mail) + "\",\"host\":\"" + std::string(host) + "\"}";
  };
  const std::string_view day = "2024-02-29", clock = "23:59:59.5+05:30",
                         moment = "2000-01-01T00:00:00Z",
                         id = "123e4567-E89B-12d3-a456-426614174000",
                         mail = "first.last+tag@mail.example.com", host = "192.168.0.255";
  EXPECT_TRUE(testing::accepts(g, text(day, clock, moment, id, mail, host)));
  for (std::string_view good : {"2000-02-29", "0004-02-29", "1999-12-31", "0001-01-01"})
    EXPECT_TRUE(testing::accepts(g, text(good, clock, moment, id, mail, host))) << good;
  for (std::string_view bad : {"2023-02-29", "1900-02-29", "0000-01-01", "2023-13-01", "2023-04-31",
                               "2023-00-10", "2023-01-00", "23-01-01"})
    EXPECT_FALSE(testing::accepts(g, text(bad, clock, moment, id, mail, host))) << bad;
  for (std::string_view bad : {"24:00:00Z", "12:00:00", "12:60:00Z", "12:00:60Z", "1:00:00Z",
                               "12:00:00.Z", "12:00:00+5:30"})
    EXPECT_FALSE(testing::accepts(g, text(day, bad, moment, id, mail, host))) << bad;
  for (std::string_view bad :
       {"2000-01-01 00:00:00Z", "2000-01-01T00:00:00", "2000-02-30T00:00:00Z"})
    EXPECT_FALSE(testing::accepts(g, text(day, clock, bad, id, mail, host))) << bad;
  for (std::string_view bad :
       {"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"})
    EXPECT_FALSE(testing::accepts(g, text(day, clock, moment, bad, mail, host))) << bad;
  for (std::string_view bad : {"no-at.example.com", "a@b", "a@.com", "a..b@c.com", "@c.com"})
    EXPECT_FALSE(testing::accepts(g, text(day, clock, moment, id, bad, host))) << bad;
  for (std::string_view bad : {"256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.-4"})
    EXPECT_FALSE(testing::accepts(g, text(day, clock, moment, id, mail, bad))) << bad;
}

TEST(json_schema_grammar, refusals_name_keyword_and_path) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
    {R"({"type":"integer","minimum":0})", "json_schema: schema: minimum is not supported"},
    {R"({"properties":{"age":{"type":"integer","maximum":3}}})",
     "json_schema: schema.properties.age: maximum is not supported"},
    {R"({"properties":{"address":{"type":"array","items":{"uniqueItems":true}}}})",
     "schema.properties.address.items: uniqueItems is not supported"},
    {R"({"prefixItems":[{"type":"string"},{"not":{}}]})",
     "schema.prefixItems.1: not is not supported"},
    {R"({"anyOf":[{"type":"string"},{"exclusiveMinimum":1}]})",
     "schema.anyOf.1: exclusiveMinimum is not supported"},
    {R"({"$defs":{"n":{"maxProperties":1}},"$ref":"#/$defs/n"})",
     "schema.$defs.n: maxProperties is not supported"},
    {R"({"additionalProperties":{"multipleOf":2}})",
     "schema.additionalProperties: multipleOf is not supported"},
    {R"({"type":"object","patternProperties":{}})", "schema: patternProperties is not supported"},
    {R"({"propertyNames":{}})", "schema: propertyNames is not supported"},
    {R"({"dependentRequired":{}})", "schema: dependentRequired is not supported"},
    {R"({"if":{},"then":{}})", "schema: if is not supported"},
    {R"({"contains":{}})", "schema: contains is not supported"},
    {R"({"minProperties":1})", "schema: minProperties is not supported"},
    {R"({"type":"string","format":"hostname"})", "schema: format 'hostname' is not supported"},
    {R"({)", "json_schema: schema: not valid JSON"},
    {R"([1])", "schema: a schema must be an object or a boolean"},
    {R"({"properties":{"a":3}})", "schema.properties.a: a schema must be an object or a boolean"},
    {R"(false)", "schema: false accepts nothing"},
    {R"({"properties":{"a":{}},"required":["b"]})",
     "schema: required names 'b', which is not in properties"},
    {R"({"allOf":[{},{}]})", "schema: allOf of more than one schema is not supported"},
    {R"({"$ref":"other.json"})", "schema: $ref to 'other.json' is not supported"},
    {R"({"items":{"$ref":"#/$defs/missing"}})",
     "schema.items: $ref to '#/$defs/missing': no such definition"},
    {R"({"type":"string","pattern":"a","minLength":1})",
     "schema: minLength together with pattern is not supported"},
    {R"({"type":"string","anyOf":[{}]})", "schema: type together with anyOf is not supported"},
    {R"({"enum":[1],"maxLength":3})", "schema: maxLength together with enum is not supported"},
    {R"({"enum":[]})", "schema: enum accepts nothing"},
    {R"({"type":"string","const":1})", "schema: const accepts nothing"},
    {R"({"type":"text"})", "schema: type 'text' is not a JSON Schema type"},
    {R"({"minItems":3,"maxItems":2})", "schema: minItems over maxItems"},
    {R"({"maxLength":-1})", "schema: maxLength must be a non-negative integer"},
    {R"({"items":[{}]})", "schema: items must be a schema"},
    {R"({"type":"array","maxItems":20000})", "schema: minItems/maxItems: "},
    {R"({"properties":{"next":{"$ref":"#"}},"required":["next"]})",
     "' matches no finite text"},
    {R"({"anyOf":[{"$ref":"#"}]})", "json_schema: schema: grammar: rule"},
  };
  for (const auto& [schema, expected] : cases) {
    result<grammar> g = json_schema_grammar(schema);
    ASSERT_FALSE(g.has_value()) << schema;
    EXPECT_NE(g.error().message.find(expected), std::string::npos)
      << schema << "\n  got: " << g.error().message << "\n  want: " << expected;
  }
}

TEST(json_schema_grammar, boolean_and_empty_schemas_take_any_value) {
  for (std::string_view schema : {"true", "{}", R"({"description":"x","x-note":1})"}) {
    const auto g = compiled(schema);
    for (std::string_view text : {R"(1)", R"("s")", R"([null,{"a":false}])", R"({})"})
      EXPECT_TRUE(testing::accepts(g, text)) << schema << " " << text;
    EXPECT_FALSE(testing::accepts(g, "{\"a\":}")) << schema;
  }
}

TEST(json_schema_grammar, thousands_of_required_properties_are_each_required) {
  // 3,000: past max_inline slots, what follows a property is a rule of its
  // own (json_schema_containers.cpp); the language stays the same.
  constexpr int n = 3000;
  std::string properties, required;
  std::vector<std::string> members; // "pI":I
  for (int i = 0; i < n; ++i) {
    const std::string name = 'p' + std::to_string(i), sep = i ? "," : "";
    properties += sep + "\"" + name + "\":{\"type\":\"integer\"}";
    required += sep + "\"" + name + "\"";
    members.push_back("\"" + name + "\":" + std::to_string(i));
  }
  // The object of every member but `skipped` (-1: none).
  const auto object_without = [&](int skipped) {
    std::string text = "{";
    for (int i = 0; i < n; ++i)
      if (i != skipped) text += (text.size() > 1 ? "," : "") + members[size_t(i)];
    return text + "}";
  };
  const std::string schema = R"({"type":"object","properties":{)" + properties +
                             R"(},"required":[)" + required + "]}";
  const result<grammar> g = json_schema_grammar(schema);
  ASSERT_TRUE(g.has_value()) << g.error().message;
  const auto shared = std::make_shared<const grammar>(*g);
  EXPECT_TRUE(testing::accepts(shared, object_without(-1)));
  // A property here is 9 slots (comma, quoted name, colon, value): counted
  // from the last, a run of about 28 is written in place before the next
  // is a rule. Every property around the first of those seams, and others.
  std::vector<int> skipped = {0, 1, 1500};
  for (int i = n - 40; i < n; ++i) skipped.push_back(i);
  for (int i : skipped) EXPECT_FALSE(testing::accepts(shared, object_without(i))) << i;
}

} // namespace
} // namespace kvactor::model
