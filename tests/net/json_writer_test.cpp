// json_writer: exact output for every kind of field, the escaping of every
// character JSON requires, invalid UTF-8 as U+FFFD, and lines that a JSON
// parser reads back to the values written.

#include "net/json_writer.hpp"

#include <gtest/gtest.h>

#include <simdjson.h>

#include <cmath>
#include <limits>

namespace kvactor::net {
namespace {

const std::string fffd = "\xef\xbf\xbd"; // U+FFFD in UTF-8

// `s` written as a string field, without the {"s": and }.
std::string written(std::string_view s) {
  std::string out = json_writer().field("s", s).str();
  return out.substr(5, out.size() - 6);
}

// The string a JSON parser reads back from field "s" of `json`.
std::string read_back(const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  std::string_view s;
  EXPECT_EQ(parser.iterate(padded).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(doc["s"].get_string().get(s), simdjson::SUCCESS) << json;
  return std::string(s);
}

TEST(json_writer, writes_an_empty_object_and_its_line) {
  EXPECT_EQ(json_writer().str(), "{}");
  EXPECT_EQ(json_writer().line(), "{}\n");
}

TEST(json_writer, writes_fields_in_order_separated_by_commas) {
  auto w = json_writer()
             .field("s", "text")
             .field("i", int32_t{-5})
             .field("l", int64_t{1} << 40)
             .field("t", true)
             .field("f", false)
             .null_field("n");
  EXPECT_EQ(w.str(), R"({"s":"text","i":-5,"l":1099511627776,"t":true,"f":false,"n":null})");
  EXPECT_EQ(w.line(), w.str() + "\n");
}

TEST(json_writer, writes_integers_at_their_limits) {
  EXPECT_EQ(json_writer()
              .field("a", std::numeric_limits<int64_t>::min())
              .field("b", std::numeric_limits<int64_t>::max())
              .field("c", std::numeric_limits<int32_t>::min())
              .field("d", int32_t{0})
              .str(),
            R"({"a":-9223372036854775808,"b":9223372036854775807,"c":-2147483648,"d":0})");
  EXPECT_EQ(json_writer().field("u", std::numeric_limits<uint64_t>::max()).str(),
            R"({"u":18446744073709551615})");
}

TEST(json_writer, writes_doubles_with_six_significant_digits) {
  EXPECT_EQ(json_writer().field("x", 0.5).str(), R"({"x":0.5})");
  EXPECT_EQ(json_writer().field("x", 3.0).str(), R"({"x":3})");
  EXPECT_EQ(json_writer().field("x", -2.25).str(), R"({"x":-2.25})");
  EXPECT_EQ(json_writer().field("x", 123456789.0).str(), R"({"x":1.23457e+08})");
  EXPECT_EQ(json_writer().field("x", 1e-7).str(), R"({"x":1e-07})");
  EXPECT_EQ(json_writer().field("x", 1.0 / 3).str(), R"({"x":0.333333})");
}

TEST(json_writer, writes_non_finite_doubles_as_null) {
  EXPECT_EQ(json_writer()
              .field("nan", std::nan(""))
              .field("inf", std::numeric_limits<double>::infinity())
              .field("ninf", -std::numeric_limits<double>::infinity())
              .str(),
            R"({"nan":null,"inf":null,"ninf":null})");
}

TEST(json_writer, escapes_every_control_character) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string s(1, static_cast<char>(c));
    std::string expected;
    switch (c) {
      case '\n': expected = R"("\n")"; break;
      case '\r': expected = R"("\r")"; break;
      case '\t': expected = R"("\t")"; break;
      default: {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\"\\u%04x\"", c);
        expected = buf;
      }
    }
    EXPECT_EQ(written(s), expected) << "character " << c;
    EXPECT_EQ(read_back(json_writer().field("s", s).str()), s) << "character " << c;
  }
}

TEST(json_writer, escapes_quotes_and_backslashes_and_nothing_else_printable) {
  EXPECT_EQ(written("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(written("C:\\dir\\"), R"("C:\\dir\\")");
  EXPECT_EQ(written("a/b \x7f ~"), "\"a/b \x7f ~\"");
  const std::string all = std::string("\"\\\x01\x1f\n\0z", 7);
  EXPECT_EQ(read_back(json_writer().field("s", all).str()), all);
}

TEST(json_writer, escapes_keys_as_strings) {
  EXPECT_EQ(json_writer().field("k\"\n", 1).str(), R"({"k\"\n":1})");
  EXPECT_EQ(json_writer().null_field("\x01").str(), R"({"\u0001":null})");
}

TEST(json_writer, keeps_valid_utf8_as_it_is) {
  for (std::string s : {"caf\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80",
                        "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_EQ(written(s), "\"" + s + "\"");
    EXPECT_EQ(read_back(json_writer().field("s", s).str()), s);
  }
}

TEST(json_writer, replaces_each_invalid_utf8_byte_with_u_fffd) {
  EXPECT_EQ(written("a\xff" "b"), "\"a" + fffd + "b\"");
  EXPECT_EQ(written("\x80"), "\"" + fffd + "\"");                // a lone continuation byte
  EXPECT_EQ(written("x\xe4\xb8"), "\"x" + fffd + fffd + "\"");   // a character cut short
  EXPECT_EQ(written("\xc0\xaf"), "\"" + fffd + fffd + "\"");     // an overlong form
  EXPECT_EQ(written("\xed\xa0\x80"), "\"" + fffd + fffd + fffd + "\""); // a surrogate
  EXPECT_EQ(written("\xf4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\""); // > U+10FFFF
  // Keys and list items too; the line stays valid JSON.
  const std::string line = json_writer().field("\xfe", std::vector<std::string>{"\xc3"}).str();
  EXPECT_EQ(line, "{\"" + fffd + "\":[\"" + fffd + "\"]}");
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(line);
  simdjson::ondemand::document doc;
  EXPECT_EQ(parser.iterate(padded).get(doc), simdjson::SUCCESS);
}

TEST(json_writer, writes_lists_of_integers_and_strings) {
  EXPECT_EQ(json_writer().field("e", std::vector<int32_t>{}).str(), R"({"e":[]})");
  EXPECT_EQ(json_writer().field("t", std::vector<int32_t>{1, -2, 2147483647}).str(),
            R"({"t":[1,-2,2147483647]})");
  EXPECT_EQ(json_writer().field("e", std::vector<std::string>{}).str(), R"({"e":[]})");
  EXPECT_EQ(json_writer().field("s", std::vector<std::string>{"a\"", "", "\n\n"}).str(),
            R"({"s":["a\"","","\n\n"]})");
  EXPECT_EQ(
    json_writer().field("l", std::vector<int64_t>{-1, std::numeric_limits<int64_t>::max()}).str(),
    R"({"l":[-1,9223372036854775807]})");
  EXPECT_EQ(json_writer().field("d", std::vector<double>{0.5, 1.0 / 3, std::nan("")}).str(),
            R"({"d":[0.5,0.333333,null]})");
  EXPECT_EQ(json_writer().field("d", std::vector<double>{}).str(), R"({"d":[]})");
}

TEST(json_writer, nests_objects_and_arrays_of_objects) {
  json_writer inner;
  inner.field("x", 1).field("y", std::vector<int32_t>{2});
  json_writer deeper;
  deeper.object("inner", inner);
  EXPECT_EQ(json_writer().object("o", inner).field("after", true).str(),
            R"({"o":{"x":1,"y":[2]},"after":true})");
  EXPECT_EQ(json_writer().object("d", deeper).str(), R"({"d":{"inner":{"x":1,"y":[2]}}})");
  EXPECT_EQ(json_writer().object("empty", json_writer()).str(), R"({"empty":{}})");
  EXPECT_EQ(json_writer().field("list", std::vector<json_writer>{inner, json_writer()}).str(),
            R"({"list":[{"x":1,"y":[2]},{}]})");
  EXPECT_EQ(json_writer().field("list", std::vector<json_writer>{}).str(), R"({"list":[]})");
}

TEST(json_writer, writes_raw_values_as_given) {
  EXPECT_EQ(json_writer().raw_field("r", R"([1,{"a":null}])").field("n", 2).str(),
            R"({"r":[1,{"a":null}],"n":2})");
}

TEST(json_writer, appends_string_literals_to_what_is_there) {
  std::string out = "prefix:";
  append_json_string(out, "q\"\x02\xff");
  EXPECT_EQ(out, "prefix:\"q\\\"\\u0002" + fffd + "\"");
}

} // namespace
} // namespace kvactor::net
